/* The timeline page (/runs/ID/timeline, docs/web.md): one canvas track per thread, grouped by
 * process, drawn from GET /api/v1/runs/ID/timeline windows at the canvas's width. Zoom (wheel,
 * buttons), pan (drag), search, click a call for /timeline/call. Names are drawn with
 * fillText or set with textContent, never parsed as HTML. */
(function () {
  "use strict";
  var ROW = 14, GAP = 18;

  function fmt(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + " us";
    return Math.round(ns) + " ns";
  }

  var BLOCKED = "#8193a8";  /* blocking calls: blue-grey, hatched (the flame graph's hue) */

  /* A diagonal hatch over blocked calls, so that they read as a state, not a function. */
  function hatch(g) {
    var c = document.createElement("canvas");
    c.width = c.height = 6;
    var h = c.getContext("2d");
    h.fillStyle = BLOCKED;
    h.fillRect(0, 0, 6, 6);
    h.strokeStyle = "#e8edf3";
    h.lineWidth = 1.5;
    h.beginPath();
    h.moveTo(0, 6); h.lineTo(6, 0);
    h.stroke();
    return g.createPattern(c, "repeat");
  }

  function legend(el) {
    function item(id, text, style) {
      return el("span", {cls: "timeline-key", id: id}, [
        el("span", {cls: "timeline-swatch timeline-swatch-" + style}), el("span", {text: text})]);
    }
    return el("p", {id: "timeline-legend"}, [
      item("timeline-key-call", "call (colour per function)", "call"),
      item("timeline-key-block", "summary block of calls narrower than a pixel", "block"),
      item("timeline-key-blocked", "blocked (in a blocking call of the C library)", "blocked"),
      item("timeline-key-mark", "mark", "mark")]);
  }

  /* A run recorded within a budget (docs/usage.md, Traces recorded within a budget): what is
   * not on this timeline. Counted functions have calls but no events; a demoted function is
   * here until the budget's governor demoted it. The run's facts come from /api/v1/runs/ID. */
  function budgetNote(S, runId, p) {
    S.api("/api/v1/runs/" + runId).then(function (res) {
      if (res.status !== 200 || !res.body || !res.body.run) return;
      var r = res.body.run, parts = [];
      if (r.counted_functions)
        parts.push(r.counted_functions + " function(s) counted, not traced: their calls " +
                   "(exact) are on the run page, not on this timeline");
      if (r.demoted_functions)
        parts.push(r.demoted_functions + " function(s) demoted by the budget's governor: " +
                   "on this timeline until their demotion, counted after");
      if (!parts.length && !r.budget) return;
      var b = r.budget, limit = !b ? "" : b.kind === "overhead"
        ? " (overhead " + Number((100 * b.limit).toFixed(4)) + " % of CPU time)"
        : " (" + b.kind + " " + b.limit + ")";
      p.textContent = "Recorded within a budget" + limit +
        (parts.length ? ": " + parts.join("; ") : "") + ".";
      p.hidden = false;
    });
  }

  function color(id) {
    var h = (id * 2654435761) % 360;
    return "hsl(" + h + ",55%,62%)";
  }

  window.ptcallTimeline = function (runId, S) {
    var el = S.el, base = "/api/v1/runs/" + runId + "/timeline";
    var view = null, data = null, span = null, pending = null, seq = 0, search = "";
    var layout = [];  /* per drawn track: {y, thread, depths} */
    var canvas = el("canvas", {id: "timeline-canvas"});
    var status = el("p", {id: "timeline-status", text: "Loading..."});
    var detail = el("div", {id: "timeline-detail"});
    var input = el("input", {id: "timeline-search", type: "search",
                             placeholder: "search functions"});
    function button(id, text, fn) {
      var b = el("button", {id: id, type: "button", text: text});
      b.addEventListener("click", fn);
      return b;
    }
    var bar = el("div", {id: "timeline-bar"}, [
      button("timeline-zoom-in", "+", function () { zoom(0.5, 0.5); }),
      button("timeline-zoom-out", "-", function () { zoom(2, 0.5); }),
      button("timeline-reset", "whole run", function () { setView(span[0], span[1]); }),
      input]);
    var budget = el("p", {id: "timeline-budget", hidden: true});
    S.show([el("h1", {text: "Run " + runId + ": timeline"}),
            el("p", null, [el("a", {href: "/runs/" + runId, text: "back to the run"})]),
            bar, legend(el), budget, status, canvas, detail]);
    budgetNote(S, runId, budget);
    document.body.dataset.ready = "";
    var width = Math.max(300, (document.getElementById("main").clientWidth || 1000) - 10);

    function fetchView() {
      var my = ++seq, t0 = Math.floor(view[0]), t1 = Math.ceil(view[1]);
      var started = performance.now();
      var url = base + "?t0=" + t0 + "&t1=" + Math.max(t1, t0 + 1) + "&px=" + width;
      return S.api(url).then(function (res) {
        if (my !== seq) return;
        if (res.status !== 200) return S.fail(res);
        data = res.body;
        if (!span) span = data.span;
        draw();
        var ms = Math.round(performance.now() - started);
        status.textContent = fmt(data.t1 - data.t0) + " shown, from " + fmt(data.t0 - span[0]) +
          (data.summarised ? " (summary of the index)" : "") + "; answered in " + ms + " ms";
        document.body.dataset.lastMs = String(ms);
        document.body.dataset.ready = "1";
        document.body.dataset.views = String((+document.body.dataset.views || 0) + 1);
      });
    }

    function setView(t0, t1) {
      if (span) {
        var w = Math.max(t1 - t0, 1000);
        t0 = Math.max(span[0], Math.min(t0, span[1] - w));
        t1 = Math.min(span[1], t0 + w);
      }
      view = [t0, t1];
      if (data) draw();
      document.body.dataset.ready = "";
      clearTimeout(pending);           /* debounced: one request per pause */
      pending = setTimeout(fetchView, 120);
    }

    function zoom(f, at) {
      var w = view[1] - view[0], c = view[0] + w * at;
      setView(c - (c - view[0]) * f, c + (view[1] - c) * f);
    }

    function x(t) { return (t - view[0]) * width / (view[1] - view[0]); }

    function draw() {
      var tracks = [];
      data.processes.forEach(function (p) {
        p.threads.forEach(function (t) { tracks.push({p: p, t: t}); });
      });
      var h = 0;
      layout = [];
      tracks.forEach(function (tr) {
        var depth = 1;
        tr.t.items.forEach(function (it) { depth = Math.max(depth, it[2] + 1); });
        layout.push({y: h + GAP, tr: tr, depth: depth});
        h += GAP + depth * ROW + 6;
      });
      canvas.width = width;
      canvas.height = Math.max(h, 40);
      var g = canvas.getContext("2d"), pattern = hatch(g), blocked = 0;
      g.font = "11px sans-serif";
      g.textBaseline = "middle";
      var needle = search.toLowerCase();
      layout.forEach(function (L) {
        var t = L.tr.t;
        g.fillStyle = "#222";
        g.fillText(L.tr.p.name.split("/").pop() + " [" + L.tr.p.pid + "] · " +
                   (t.name || "thread") + " [" + t.tid + "]", 2, L.y - 8);
        t.items.forEach(function (it) {
          var x0 = x(it[0]), x1 = Math.max(x(it[1]), x0 + 1), y = L.y + it[2] * ROW;
          var f = data.functions[it[3]], name = f ? f.name : "?";
          var block = (it[6] & 4) !== 0, isBlocked = (it[6] & 8) !== 0;
          var hit = needle && name.toLowerCase().indexOf(needle) >= 0;
          if (isBlocked) blocked++;
          g.fillStyle = hit ? "#ff3b30" : isBlocked ? pattern : block ? "#b9b9c8" : color(it[3]);
          g.fillRect(x0, y, x1 - x0 - (block ? 0 : 0.5), ROW - 1);
          if (block) {
            g.strokeStyle = "#777";
            g.strokeRect(x0 + 0.5, y + 0.5, Math.max(x1 - x0 - 1, 0), ROW - 2);
          } else if (x1 - x0 > 30) {
            g.save();
            g.beginPath();
            g.rect(x0, y, x1 - x0, ROW);
            g.clip();
            g.fillStyle = "#000";
            g.fillText(name, x0 + 2, y + ROW / 2);
            g.restore();
          }
        });
      });
      data.marks.forEach(function (m) {
        g.strokeStyle = "#0a7";
        g.beginPath();
        g.moveTo(x(m.time), 0);
        g.lineTo(x(m.time), canvas.height);
        g.stroke();
      });
      document.body.dataset.hits = String(needle ? countHits(needle) : 0);
      document.body.dataset.blocked = String(blocked);
    }

    function countHits(needle) {
      var n = 0;
      data.processes.forEach(function (p) { p.threads.forEach(function (t) {
        t.items.forEach(function (it) {
          var f = data.functions[it[3]];
          if (f && f.name.toLowerCase().indexOf(needle) >= 0) n++;
        });
      }); });
      return n;
    }

    function itemAt(ev) {
      var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
      var t = view[0] + px * (view[1] - view[0]) / width;
      for (var i = 0; i < layout.length; i++) {
        var L = layout[i], d = Math.floor((py - L.y) / ROW);
        if (d < 0 || d >= L.depth) continue;
        var best = null;
        L.tr.t.items.forEach(function (it) {
          if (it[2] === d && x(it[0]) <= px + 1 && px - 1 <= x(it[1])) best = it;
        });
        if (best) return {thread: L.tr.t, it: best, t: Math.min(Math.max(t, best[0]), best[1] - 1)};
      }
      return null;
    }

    function showCall(hit) {
      var f = data.functions[hit.it[3]];
      detail.textContent = "";
      if (hit.it[6] & 4) {
        detail.appendChild(el("p", {id: "timeline-block", text: "summary block: " + hit.it[4] +
          " calls in " + fmt(hit.it[1] - hit.it[0]) + " (" + fmt(hit.it[5]) +
          " in calls), most time " + (hit.it[6] & 8 ? "blocked in " : "in ") +
          (f ? f.name : "?") + ": zoom in to see them"}));
        return;
      }
      S.api(base + "/call?thread=" + hit.thread.index + "&t=" + Math.floor(hit.t) + "&depth=" +
            hit.it[2]).then(function (res) {
        detail.textContent = "";
        if (res.status !== 200) {
          detail.appendChild(el("p", {cls: "error", text: res.body.error || "HTTP " + res.status}));
          return;
        }
        var c = res.body, fn = c["function"];
        if (c.blocking)
          detail.appendChild(el("p", {id: "timeline-blocked", text: "blocked in " + fn.name +
            " for " + fmt(c.duration)}));
        var dl = el("dl", {id: "timeline-call"});
        [["function", fn.name], ["duration", fmt(c.duration) + (c.open ? " (still open)" : "")],
         ["duration_ns", String(c.duration)], ["self", fmt(c.self)],
         ["source", fn.file ? fn.file + (fn.line ? ":" + fn.line : "") : "not known"],
         ["calls made", String(c.calls)]].forEach(function (kv) {
          dl.appendChild(el("dt", {text: kv[0]}));
          dl.appendChild(el("dd", {"data-key": kv[0], text: kv[1]}));
        });
        detail.appendChild(dl);
        var rows = c.children.map(function (k) {
          return el("tr", null, [el("td", {text: k["function"].name}),
                                 el("td", {text: String(k.calls)}), el("td", {text: fmt(k.total)})]);
        });
        detail.appendChild(S.table("timeline-children", ["callee", "calls", "total"], rows));
        if (c.children_calls < c.calls)
          detail.appendChild(el("p", {id: "timeline-children-more", text: (c.calls -
            c.children_calls) + " more calls, made in the middle of this call, are counted " +
            "from the index but not broken down by callee: zoom in to see them"}));
        document.body.dataset.callReady = "1";
      });
    }

    canvas.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var r = canvas.getBoundingClientRect();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, (ev.clientX - r.left) / width);
    }, {passive: false});
    var drag = null;
    canvas.addEventListener("mousedown", function (ev) {
      drag = {x: ev.clientX, v: view.slice(), moved: false};
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var dx = ev.clientX - drag.x;
      if (Math.abs(dx) > 2) drag.moved = true;
      var dt = dx * (drag.v[1] - drag.v[0]) / width;
      if (drag.moved) setView(drag.v[0] - dt, drag.v[1] - dt);
    });
    window.addEventListener("mouseup", function (ev) {
      var d = drag;
      drag = null;
      if (d && !d.moved && ev.target === canvas) {
        var hit = itemAt(ev);
        if (hit) showCall(hit);
      }
    });
    canvas.addEventListener("mousemove", function (ev) {
      if (drag) return;
      var hit = itemAt(ev);
      if (!hit) { canvas.title = ""; return; }
      var f = data.functions[hit.it[3]], name = f ? f.name : "?";
      canvas.title = hit.it[6] & 4 ? hit.it[4] + " calls (" + fmt(hit.it[5]) + "), mostly " + name
                   : (hit.it[6] & 8 ? "blocked in " : "") + name + ": " + fmt(hit.it[1] - hit.it[0]);
    });
    input.addEventListener("input", function () {
      search = input.value;
      if (data) draw();
    });
    /* for tests and bench/timeline.py: set a window directly */
    window.ptcallTimelineView = function (t0, t1) { setView(t0, t1); };
    window.ptcallTimelineData = function () { return data; };
    view = [0, 1];
    S.api(base + "?px=" + width).then(function (res) {
      if (res.status !== 200) return S.fail(res);
      data = res.body;
      span = data.span;
      view = [span[0], span[1]];
      draw();
      status.textContent = "the whole run: " + fmt(span[1] - span[0]);
      document.body.dataset.firstMs = String(Math.round(performance.now()));
      document.body.dataset.ready = "1";
    });
  };
})();
