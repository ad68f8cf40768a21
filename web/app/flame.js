/* The interactive flame graph of the run page and the differential one of the diff page
 * (docs/web.md, "Flame tree"), drawn by d3-flame-graph (npm; it needs the global d3) from
 * /api/v1/runs/ID/flame.json, or, in the file of `ptcall html`, from the same answers
 * embedded in it. Function names reach the page through textContent and d3's .text() only.
 * app.js calls window.ptcallFlame.run(box, runId, timed, shared) and .diff(...). */
"use strict";

(function () {
  function fileMode() { return document.body.dataset.mode === "file"; }

  /* the answer for (run, thread, weight): the server makes the one tree asked for; the file
   * holds every tree of each weight and the tree is picked here */
  function load(S, run, thread, weight) {
    var base = "/api/v1/runs/" + run + "/flame.json";
    if (!fileMode())
      return S.api(base + "?thread=" + encodeURIComponent(thread) + "&weight=" + weight);
    return S.api(base + "?weight=" + weight).then(function (res) {
      if (res.status !== 200) return res;
      var f = res.body.flame;
      var trees = f.trees.filter(function (t) {
        return thread === "all" ? t.thread === "all" : t.thread !== "all" &&
          String(t.thread.tid) === String(thread);
      });
      var copy = {};
      for (var k in f) copy[k] = f[k];
      copy.trees = trees;
      copy.selected = thread;
      return {status: 200, body: {flame: copy}};
    });
  }

  function fmtValue(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit === "calls") return v.toLocaleString("en-US") + " calls";
    if (unit === "ticks") return v.toLocaleString("en-US") + " ticks";
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (v / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (v / 1e3).toFixed(3) + " us";
    return v + " ns";
  }

  /* frames of the runtime's [blocking] module (the tree's "blocked": waited, not run): one
   * cold colour (flame.css's .flame-blocked, the legend's swatch), apart from the warm ones of
   * running code; a search match stays highlighted */
  var BLOCKED_COLOUR = "#7f93b8";
  function blockedColour(d, original) {
    return d.data.blocked && !d.highlight ? BLOCKED_COLOUR : original;
  }

  /* how many frames of tree root are blocked, and their width */
  function blockedFrames(root) {
    var n = 0, v = 0;
    (function walk(x) {
      if (x.blocked) { n++; v += x.value || 0; }
      (x.children || []).forEach(walk);
    })(root);
    return {frames: n, value: v};
  }

  function lib() {
    return window.flamegraph && window.d3 ? window.flamegraph : null;
  }

  /* The sandwich of function name in tree root: its callers above (each path to it, merged
   * from the function up) and its callees below (its subtrees merged), as two trees. A call
   * of name inside a call of name counts once (the outer one). */
  function sandwich(root, name) {
    var callers = {name: name, value: 0, calls: 0, self: 0, total: 0, children: []};
    var callees = {name: name, value: 0, calls: 0, self: 0, total: 0, children: []};
    function add(into, node) { /* node's subtree merged into into's children */
      (node.children || []).forEach(function (c) {
        var m = into.children.find(function (x) { return x.name === c.name; });
        if (!m) {
          m = {name: c.name, value: 0, calls: 0, self: 0, total: 0, children: []};
          if (c.blocked) m.blocked = true;
          into.children.push(m);
        }
        m.value += c.value; m.calls += c.calls; m.self += c.self || 0; m.total += c.total || 0;
        add(m, c);
      });
    }
    function walk(node, path, inside) {
      var hit = node.name === name && path.length > 0;
      if (hit && !inside) {
        if (node.blocked) { callers.blocked = true; callees.blocked = true; }
        callers.value += node.value; callers.calls += node.calls;
        callers.self += node.self || 0; callers.total += node.total || 0;
        callees.value += node.value; callees.calls += node.calls;
        callees.self += node.self || 0; callees.total += node.total || 0;
        var at = callers;
        for (var i = path.length - 1; i >= 1; i--) {
          var p = path[i];
          var m = at.children.find(function (x) { return x.name === p.name; });
          if (!m) {
            m = {name: p.name, value: 0, calls: 0, self: 0, total: 0, children: []};
            if (p.blocked) m.blocked = true;
            at.children.push(m);
          }
          m.value += node.value; m.calls += node.calls;
          at = m;
        }
        add(callees, node);
      }
      (node.children || []).forEach(function (c) { walk(c, path.concat([node]), inside || hit); });
    }
    walk(root, [], false);
    return {callers: callers, callees: callees};
  }

  function draw(S, box, tree, unit, opts) {
    var fg = lib();
    box.textContent = "";
    var width = Math.max(600, Math.min(1400, (box.parentNode || box).clientWidth || 1200));
    var chart = fg.default().width(width).cellHeight(18).transitionDuration(300)
      .minFrameSize(1).sort(false).inverted(!!opts.inverted).title("");
    var rootValue = tree.value || 1;
    var tip = opts.tip;
    chart.setLabelHandler(function (d) {
      var x = d.data;
      return x.name + " (" + fmtValue(x.value, unit) + ", " +
        (100 * x.value / rootValue).toFixed(2) + " %)";
    });
    chart.onHover(function (d) {
      var x = d.data;
      tip.textContent = "";
      [x.blocked ? x.name + " (blocked: waiting in the C library, not running)" : x.name,
       "calls: " + (x.calls || 0).toLocaleString("en-US"),
       "self: " + fmtValue(x.self, opts.timeUnit || "calls"),
       "total: " + fmtValue(x.total, opts.timeUnit || "calls"),
       "width: " + fmtValue(x.value, unit) + " = " +
         (100 * x.value / rootValue).toFixed(2) + " % of the root" +
         (x.still_open ? "; " + x.still_open + " call(s) still open at the end (lower bounds)" : "") +
         (x.delta !== undefined ? "; self change " + (x.delta > 0 ? "+" : "") +
          fmtValue(x.delta, opts.timeUnit || "calls") : "")]
        .forEach(function (line) {
          var div = document.createElement("div");
          div.textContent = line;
          tip.appendChild(div);
        });
      tip.dataset.name = x.name;
      tip.hidden = false;
    });
    if (opts.details) chart.setDetailsElement(opts.details);
    if (opts.onSearch) chart.setSearchHandler(opts.onSearch);
    if (opts.color) chart.setColorMapper(opts.color);
    if (opts.onClick) chart.onClick(opts.onClick);
    window.d3.select(box).datum(tree).call(chart);
    box.addEventListener("mousemove", function (ev) {
      tip.style.left = (ev.pageX + 14) + "px";
      tip.style.top = (ev.pageY + 14) + "px";
    });
    box.addEventListener("mouseleave", function () { tip.hidden = true; });
    return chart;
  }

  /* The run page's flame graph: pickers, search, zoom, reset, icicle, sandwich. */
  function run(box, runId, timed, S) {
    var el = S.el;
    if (!lib()) {
      box.appendChild(el("p", {cls: "error", id: "flame-error",
                               text: "the flame graph library (d3, d3-flame-graph) did not load"}));
      return;
    }
    var state = {thread: "all", weight: timed ? "self" : "calls", inverted: false,
                 sandwich: null, doc: null, tree: null, chart: null};
    var threadSel = el("select", {id: "flame-thread"}, [el("option", {value: "all",
                                                                       text: "all threads"})]);
    var weightSel = el("select", {id: "flame-weight"});
    ["calls", "self", "total"].forEach(function (w) {
      var o = el("option", {value: w, text: w === "calls" ? "calls" : w + " time"});
      if (!timed && w !== "calls") o.disabled = true;
      if (w === state.weight) o.selected = true;
      weightSel.appendChild(o);
    });
    var search = el("input", {id: "flame-search", type: "search",
                              placeholder: "search (regular expression)"});
    var found = el("span", {id: "flame-found", cls: "flame-found"});
    var reset = el("button", {id: "flame-reset", type: "button", text: "reset zoom"});
    var inv = el("input", {id: "flame-inverted", type: "checkbox"});
    var sandBtn = el("button", {id: "flame-sandwich", type: "button",
                                text: "sandwich of the last clicked function"});
    var sandOff = el("button", {id: "flame-sandwich-off", type: "button", text: "back"});
    sandOff.hidden = true;
    var note = el("p", {id: "flame-note", cls: "flame-note"});
    var legend = el("p", {id: "flame-legend", cls: "flame-legend"});
    legend.hidden = true;
    var details = el("p", {id: "flame-details", cls: "flame-details"});
    var chartBox = el("div", {id: "flame-chart", cls: "flame-chart"});
    var chart2Box = el("div", {id: "flame-chart-callees", cls: "flame-chart"});
    var tip = el("div", {id: "flame-tip", cls: "flame-tip"});
    tip.hidden = true;
    var controls = el("div", {id: "flame-controls", cls: "filters"}, [
      el("label", null, ["thread ", threadSel]), el("label", null, ["weight ", weightSel]),
      search, found, reset, el("label", null, [inv, " icicle (root on top)"]), sandBtn, sandOff]);
    [controls, note, legend, details, chartBox, chart2Box, tip].forEach(function (n) {
      box.appendChild(n);
    });
    var clicked = null;

    function onSearch(results, sum, total) {
      var share = total ? 100 * sum / total : 0;
      found.textContent = search.value ? results.length + " frame(s) match, " +
        share.toFixed(2) + " % of the width" : "";
      found.dataset.matches = String(results.length);
      found.dataset.share = String(share);
    }

    function render() {
      var f = state.doc, t = state.tree;
      chart2Box.textContent = "";
      chartBox.dataset.thread = state.thread;
      chartBox.dataset.weight = f.weight;
      chartBox.dataset.rootValue = String(t.root.value);
      chartBox.dataset.rootCalls = String(t.root.calls);
      showLegend(t.root, f);
      var common = {tip: tip, details: details, onSearch: onSearch, timeUnit: f.time_unit,
                    color: blockedColour,
                    inverted: state.inverted, onClick: function (d) {
                      clicked = d.data.name;
                      chartBox.dataset.zoomed = d.depth ? d.data.name : "";
                    }};
      if (state.sandwich) {
        var s = sandwich(t.root, state.sandwich);
        note.textContent = "sandwich of " + state.sandwich + ": its callers above (inverted), " +
          "what it calls below; " + fmtValue(s.callees.value, f.value_unit) + " in all";
        var c1 = Object.assign({}, common, {inverted: false});
        state.chart = draw(S, chartBox, s.callers, f.value_unit, c1);
        draw(S, chart2Box, s.callees, f.value_unit, Object.assign({}, common, {inverted: true}));
        chartBox.dataset.rootValue = String(s.callers.value);
        return;
      }
      var parts = [t.root.name + ": " + fmtValue(t.root.value, f.value_unit) + " (width: " +
                   (f.weight === "calls" ? "calls" : f.weight + " time") + ")"];
      if (t.thread === "all")
        parts.push(t.note);
      if (t.omitted_nodes)
        parts.push(t.omitted_nodes + " frame(s) too narrow to draw left out (their weight " +
                   "stays in their callers)");
      if (f.counted) parts.push(f.counted.note);
      note.textContent = parts.join("; ");
      state.chart = draw(S, chartBox, t.root, f.value_unit, common);
      if (search.value) state.chart.search(search.value);
    }

    /* the blocked frames' colour explained, when the tree has any */
    function showLegend(root, f) {
      var b = blockedFrames(root);
      legend.textContent = "";
      legend.hidden = !b.frames;
      legend.dataset.frames = String(b.frames);
      legend.dataset.value = String(b.value);
      if (!b.frames) return;
      legend.appendChild(el("span", {cls: "flame-swatch flame-blocked"}));
      legend.appendChild(document.createTextNode(
        " blocked: " + b.frames + " frame(s) of the C library's blocking calls (waits, sleeps, " +
        "blocking reads and writes), " + fmtValue(b.value, f.value_unit) + " = " +
        (100 * b.value / (root.value || 1)).toFixed(2) + " % of the width: time waited, " +
        "not run"));
    }

    function fetchAndRender() {
      note.textContent = "loading...";
      load(S, runId, state.thread, state.weight).then(function (res) {
        if (res.status !== 200) {
          chartBox.textContent = "";
          note.textContent = "";
          chartBox.appendChild(el("p", {cls: "error", id: "flame-error",
                                        "data-status": String(res.status),
                                        text: res.body && res.body.error ? res.body.error :
                                          "HTTP " + res.status}));
          return;
        }
        state.doc = res.body.flame;
        state.tree = state.doc.trees[0];
        if (threadSel.options.length === 1)
          state.doc.threads.forEach(function (th) {
            threadSel.appendChild(el("option", {value: String(th.tid), text: th.label}));
          });
        if (!state.tree) {
          note.textContent = "no calls in this thread";
          return;
        }
        threadSel.options[0].textContent = "all threads (sum over " +
          state.doc.threads.length + ")";
        render();
        box.dataset.ready = "1";
      });
    }

    threadSel.addEventListener("change", function () {
      state.thread = threadSel.value; state.sandwich = null; fetchAndRender();
    });
    weightSel.addEventListener("change", function () {
      state.weight = weightSel.value; fetchAndRender();
    });
    search.addEventListener("input", function () {
      if (!state.chart) return;
      if (search.value) {
        try { new RegExp(search.value); } catch (e) {
          found.textContent = "not a regular expression";
          return;
        }
        state.chart.search(search.value);
      } else {
        state.chart.clear();
        onSearch([], 0, 0);
      }
    });
    reset.addEventListener("click", function () {
      if (state.chart) state.chart.resetZoom();
      chartBox.dataset.zoomed = "";
    });
    inv.addEventListener("change", function () {
      state.inverted = inv.checked; if (state.doc) render();
    });
    sandBtn.addEventListener("click", function () {
      if (!clicked || !state.doc) return;
      state.sandwich = clicked; sandOff.hidden = false; render();
    });
    sandOff.addEventListener("click", function () {
      state.sandwich = null; sandOff.hidden = true; render();
    });
    fetchAndRender();
  }

  /* The diff page's differential flame graph: the new run's tree (all threads), each frame
   * coloured by the change of its self time (calls when untimed) against the same path in
   * the base run: red more, blue less, grey the same. */
  function diff(box, baseId, newId, timed, S) {
    var el = S.el;
    if (!lib()) return;
    var weight = timed ? "self" : "calls";
    var legend = el("p", {id: "flame-diff-legend", cls: "flame-legend"});
    var chartBox = el("div", {id: "flame-diff-chart", cls: "flame-chart"});
    var details = el("p", {id: "flame-diff-details", cls: "flame-details"});
    var tip = el("div", {id: "flame-tip", cls: "flame-tip"});
    tip.hidden = true;
    [legend, details, chartBox, tip].forEach(function (n) { box.appendChild(n); });
    Promise.all([load(S, baseId, "all", weight), load(S, newId, "all", weight)])
      .then(function (rs) {
        if (rs[0].status !== 200 || rs[1].status !== 200) {
          var bad = rs[0].status !== 200 ? rs[0] : rs[1];
          chartBox.appendChild(el("p", {cls: "error", id: "flame-diff-error",
                                        text: bad.body && bad.body.error ? bad.body.error :
                                          "HTTP " + bad.status}));
          return;
        }
        var bt = rs[0].body.flame.trees[0], nt = rs[1].body.flame.trees[0];
        var f = rs[1].body.flame, field = timed ? "self" : "calls";
        if (!bt || !nt) return;
        var changed = 0;
        function own(n) { return n[field] || 0; }
        function mark(n, b) { /* n: the new run's node; b: the base's node at its path */
          n.delta = own(n) - (b ? own(b) : 0);
          if (n.delta) changed++;
          (n.children || []).forEach(function (c) {
            var m = b && b.children ? b.children.find(function (x) { return x.name === c.name; })
                                    : null;
            mark(c, m);
          });
        }
        mark(nt.root, bt.root);
        nt.root.delta = 0;
        legend.textContent = "width: run " + newId + "'s " + (timed ? "self time" : "calls") +
          " (all threads); colour: change of each frame's own " + field + " against run " +
          baseId + " at the same call path: red more, blue less, grey the same, the deeper " +
          "the colour the larger the change against the frame's width; " + changed +
          " frame(s) changed";
        legend.dataset.changed = String(changed);
        draw(S, chartBox, nt.root, f.value_unit, {
          tip: tip, details: details, timeUnit: f.time_unit,
          color: lib().colorMapper.differentialColorMapper});
        box.dataset.ready = "1";
      });
  }

  window.ptcallFlame = {run: run, diff: diff, sandwich: sandwich};
})();
