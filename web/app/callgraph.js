/* The run page's call graph (docs/web.md): the nodes and edges of /api/v1/runs/ID/callgraph,
 * laid out by Graphviz (@hpcc-js/wasm-graphviz: served as /static/graphviz.js and imported
 * when first needed; inlined as a module block in `ptcall html`'s file, which hands it over
 * as window.ptcallGraphviz). Names go into the DOT text escaped, and once Graphviz has made
 * the SVG every label and tooltip is set again with textContent from the answer itself, so a
 * function called <script>... is only ever text. Pan (drag), zoom (wheel), fit to width;
 * clicking a node focuses on it (its callers up to the roots, its callees down). */
"use strict";

(function () {
  var SVGNS = "http://www.w3.org/2000/svg";
  var gvPromise = null;

  function loadGraphviz(file) {
    if (gvPromise) return gvPromise;
    if (window.ptcallGraphviz) {
      gvPromise = window.ptcallGraphviz.load();
    } else if (file) {
      gvPromise = new Promise(function (resolve, reject) {
        var t = setTimeout(function () {
          reject(new Error("Graphviz is not in this file: make it again with ptcall html"));
        }, 20000);
        window.addEventListener("ptcall-graphviz", function () {
          clearTimeout(t);
          resolve(window.ptcallGraphviz.load());
        }, {once: true});
      });
    } else {
      gvPromise = import("/static/graphviz.js").then(function (m) { return m.Graphviz.load(); });
    }
    return gvPromise;
  }

  /* a DOT double-quoted string: backslashes and quotes escaped, so that no name ends the
   * string or becomes one of Graphviz's \N \G \L escapes; control characters as spaces */
  function dotStr(s) {
    /* & too: Graphviz reads entities in labels, and would size "&amp;" as "&" */
    return "\"" + String(s).replace(/[\\"]/g, "\\$&").replace(/[\x00-\x1f\x7f]/g, " ")
      .replace(/&/g, "&amp;") + "\"";
  }

  function fmtTime(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit !== "ns") return String(v);
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (v / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (v / 1e3).toFixed(3) + " us";
    return v + " ns";
  }

  function pct(x) {
    return (100 * x).toFixed(x >= 0.1 ? 1 : 2) + "%";
  }

  function short(name) {
    return name.length > 60 ? name.slice(0, 59) + "\u2026" : name;
  }

  /* the label's lines, pprof's way: name, flat (self), cum (total); calls */
  function lines(n, unit) {
    var l = [short(n.name)];
    if (n.self !== null) {
      l.push("flat " + fmtTime(n.self, unit) + " (" + pct(n.self_share) + ")");
      l.push("cum " + fmtTime(n.total, unit) + " (" + pct(n.total_share) + ")");
      l.push(n.calls + " call" + (n.calls === 1 ? "" : "s"));
    } else {
      l.push(n.calls + " call" + (n.calls === 1 ? "" : "s") +
             (n.calls_share !== null ? " (" + pct(n.calls_share) + ")" : ""));
      if (n.state === "counted") l.push("counted");
    }
    // a budget's governor demoted it: its calls are exact, its times stop at the demotion
    if (n.demoted) l.push(n.self !== null ? "demoted: times until then" : "demoted");
    return l;
  }

  /* white to red by share, as ptcall graph --heat colours */
  function heat(share) {
    var x = Math.sqrt(Math.max(0, Math.min(1, share)));
    var gb = Math.round(255 - 200 * x).toString(16);
    if (gb.length < 2) gb = "0" + gb;
    return "#ff" + gb + gb;
  }

  function toDot(g) {
    var flatMax = 0, callsMax = 1;
    g.nodes.forEach(function (n) {
      flatMax = Math.max(flatMax, n.self !== null ? n.self_share : (n.calls_share || 0));
    });
    g.edges.forEach(function (e) { callsMax = Math.max(callsMax, e.calls); });
    var out = ["digraph ptcall {", " graph [rankdir=TB, nodesep=0.3, ranksep=0.45];",
               " node [shape=box, style=\"filled\", fontname=\"Courier\", margin=\"0.12,0.06\"];",
               " edge [fontname=\"Courier\", fontsize=10, arrowsize=0.8];"];
    g.nodes.forEach(function (n) {
      var flat = n.self !== null ? n.self_share : (n.calls_share || 0);
      var rel = flatMax > 0 ? flat / flatMax : 0;
      /* each line escaped, then joined by DOT's line break (a newline in a name is a space) */
      var label = lines(n, g.time_unit).map(function (x) { return dotStr(x).slice(1, -1); });
      out.push(" f" + n.id + " [label=\"" + label.join("\\n") + "\"" +
               ", fontsize=" + (10 + 8 * Math.sqrt(rel)).toFixed(1) +
               ", fillcolor=\"" + heat(flat) + "\"" +
               (n.id === g.focus ? ", penwidth=3" : "") + "];");
    });
    g.edges.forEach(function (e) {
      var w = 1 + 4 * Math.log(1 + e.calls) / Math.log(1 + callsMax);
      out.push(" f" + e.caller_id + " -> f" + e.callee_id + " [label=" + dotStr(" " + e.calls) +
               ", penwidth=" + w.toFixed(2) + "];");
    });
    out.push("}");
    return out.join("\n");
  }

  var ALLOWED = {svg: 1, g: 1, title: 1, polygon: 1, path: 1, ellipse: 1, text: 1,
                 polyline: 1, defs: 1};

  /* Graphviz's SVG as elements of this page, with nothing in it but shapes and text: any
   * other element or an event attribute is dropped (the names are escaped already; this
   * is the second fence) */
  function parseSvg(text) {
    var doc = new DOMParser().parseFromString(text, "image/svg+xml");
    var svg = doc.documentElement;
    if (!svg || svg.nodeName !== "svg") throw new Error("Graphviz made no SVG");
    (function clean(e) {
      Array.prototype.slice.call(e.children).forEach(function (c) {
        if (!ALLOWED[c.nodeName]) { c.remove(); return; }
        Array.prototype.slice.call(c.attributes).forEach(function (a) {
          if (/^on/i.test(a.name) || /href$/i.test(a.name)) c.removeAttribute(a.name);
        });
        clean(c);
      });
    })(svg);
    return document.importNode(svg, true);
  }

  /* a viewBox that drag pans and the wheel zooms about the pointer */
  function panZoom(svg, full) {
    var vb = full.slice(), drag = null;
    function set() { svg.setAttribute("viewBox", vb.join(" ")); }
    function toUser(ev) {
      var r = svg.getBoundingClientRect();
      var s = Math.max(vb[2] / r.width, vb[3] / r.height);
      /* preserveAspectRatio xMidYMid meet: the box is centred in the element */
      var ox = (r.width - vb[2] / s) / 2, oy = (r.height - vb[3] / s) / 2;
      return [vb[0] + (ev.clientX - r.left - ox) * s, vb[1] + (ev.clientY - r.top - oy) * s, s];
    }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var p = toUser(ev), k = ev.deltaY > 0 ? 1.15 : 1 / 1.15;
      vb = [p[0] - (p[0] - vb[0]) * k, p[1] - (p[1] - vb[1]) * k, vb[2] * k, vb[3] * k];
      set();
    }, {passive: false});
    svg.addEventListener("mousedown", function (ev) {
      drag = {x: ev.clientX, y: ev.clientY, vb: vb.slice(), s: toUser(ev)[2], moved: false};
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      vb = [drag.vb[0] - dx * drag.s, drag.vb[1] - dy * drag.s, vb[2], vb[3]];
      set();
    });
    window.addEventListener("mouseup", function () {
      if (drag && drag.moved) svg.dataset.dragged = "1";
      drag = null;
    });
    set();
    return function fit() { vb = full.slice(); set(); };
  }

  /* callers up to the roots and callees down, over the edges of g (the file's answer holds
   * the whole graph's edges only: its focus is of what that graph shows) */
  function focusLocal(g, fid) {
    var up = {}, down = {};
    function walk(flag, from, to) {
      var q = [fid];
      flag[fid] = true;
      while (q.length) {
        var v = q.shift();
        g.edges.forEach(function (e) {
          if (e[from] === v && !flag[e[to]]) { flag[e[to]] = true; q.push(e[to]); }
        });
      }
    }
    walk(up, "callee_id", "caller_id");
    walk(down, "caller_id", "callee_id");
    var r = Object.assign({}, g);
    r.focus = fid;
    r.nodes = g.nodes.filter(function (n) { return up[n.id] || down[n.id]; });
    r.edges = g.edges.filter(function (e) {
      return (up[e.caller_id] && up[e.callee_id]) || (down[e.caller_id] && down[e.callee_id]);
    });
    return r;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* opts: run (id), api (path -> {status, body}), href (page path -> link), file (the
   * self-contained report), focus (a function id to start focused on) */
  function mount(box, opts) {
    box.textContent = "";
    var bar = el("div", {"class": "cg-bar"});
    var note = el("p", {id: "callgraph-note", "class": "cg-note"});
    var area = el("div", {id: "callgraph-box", "class": "cg-area"});
    box.appendChild(bar);
    box.appendChild(note);
    box.appendChild(area);
    var whole = null;

    function show(fid) {
      /* the page's own min_share= and max_nodes= (served pages) go to the API */
      var q = [], page = new URLSearchParams(opts.file ? "" : location.search);
      ["min_share", "max_nodes"].forEach(function (k) {
        if (page.has(k)) q.push(k + "=" + encodeURIComponent(page.get(k)));
      });
      var base = "/api/v1/runs/" + opts.run + "/callgraph" + (q.length ? "?" + q.join("&") : "");
      var path = base + (fid ? (q.length ? "&" : "?") + "focus=" + fid : "");
      note.textContent = "Laying out the call graph\u2026";
      var got = opts.file || !fid ? opts.api(base) : opts.api(path);
      Promise.all([got, loadGraphviz(opts.file)]).then(function (res) {
        var r = res[0], gv = res[1];
        if (r.status !== 200) {
          note.textContent = r.body.error || "no call graph";
          note.className = "error";
          return;
        }
        var g = r.body;
        if (!fid) whole = g;
        if (fid && opts.file) g = focusLocal(g, fid);
        draw(g, gv.dot(toDot(g)), fid);
      }).catch(function (err) {
        note.textContent = "call graph: " + err.message;
        note.className = "error";
      });
    }

    function draw(g, svgText, fid) {
      area.textContent = "";
      bar.textContent = "";
      var svg = parseSvg(svgText);
      var full = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(Number);
      svg.id = "callgraph";
      svg.removeAttribute("width");
      svg.removeAttribute("height");
      svg.setAttribute("role", "img");
      svg.setAttribute("data-focus", fid ? String(fid) : "");
      var byId = {};
      g.nodes.forEach(function (n) { byId[n.id] = n; });
      Array.prototype.forEach.call(svg.querySelectorAll("g.node"), function (gn) {
        var t = gn.querySelector("title");
        var n = t && byId[Number(t.textContent.slice(1))];
        if (!n) return;
        gn.setAttribute("data-function", String(n.id));
        gn.setAttribute("data-calls", String(n.calls));
        gn.setAttribute("data-self", n.self === null ? "" : String(n.self));
        gn.setAttribute("data-total", n.total === null ? "" : String(n.total));
        if (n.root) gn.setAttribute("data-root", "1");
        t.textContent = n.name; /* the tooltip: the whole name */
        var l = lines(n, g.time_unit);
        Array.prototype.forEach.call(gn.querySelectorAll("text"), function (tx, i) {
          tx.textContent = i < l.length ? l[i] : "";
        });
        gn.addEventListener("click", function () {
          if (svg.dataset.dragged) { delete svg.dataset.dragged; return; }
          show(n.id);
        });
      });
      Array.prototype.forEach.call(svg.querySelectorAll("g.edge"), function (ge) {
        var t = ge.querySelector("title");
        var m = t && /^f(\d+)->f(\d+)$/.exec(t.textContent);
        if (!m) return;
        ge.setAttribute("data-caller", m[1]);
        ge.setAttribute("data-callee", m[2]);
        var e = g.edges.filter(function (x) {
          return String(x.caller_id) === m[1] && String(x.callee_id) === m[2];
        })[0];
        if (e) ge.setAttribute("data-calls", String(e.calls));
      });
      area.appendChild(svg);
      /* fit to width (a small graph no larger than Graphviz drew it: points to pixels),
       * no taller than most of the window */
      var w = Math.min(area.clientWidth || 900, full[2] * 4 / 3);
      var h = Math.min(full[3] * w / full[2], Math.max(300, window.innerHeight * 0.8));
      svg.style.width = w + "px";
      svg.style.margin = "0 auto";
      svg.style.height = Math.max(120, h) + "px";
      var fit = panZoom(svg, full);
      var fitBtn = el("button", {id: "callgraph-fit", type: "button"}, "fit");
      fitBtn.addEventListener("click", fit);
      bar.appendChild(fitBtn);
      if (fid) {
        var back = el("button", {id: "callgraph-whole", type: "button"}, "whole graph");
        back.addEventListener("click", function () { show(null); });
        bar.appendChild(back);
        var f = byId[fid];
        bar.appendChild(document.createTextNode(" focused on "));
        bar.appendChild(el("a", {href: opts.href("/functions/" + fid), id: "callgraph-focus"},
                           f ? f.name : String(fid)));
        bar.appendChild(document.createTextNode(": its callers up to the roots and its " +
                                                "callees down"));
      }
      note.className = "cg-note";
      note.textContent = g.nodes.length + " of " + g.functions_in_run + " functions, chosen by " +
        (g.weight === "total" ? "inclusive time" : "calls") + " share \u2265 " +
        pct(g.min_share) + " with the roots and the paths to them" +
        (g.cut ? "; " + g.cut + " more over the share left out by the cap of " + g.max_nodes +
         " nodes" : "") + ". Drag to pan, wheel to zoom, click a function to focus on it.";
    }

    show(opts.focus || null);
  }

  window.ptcallCallgraph = {mount: mount, dotStr: dotStr};
})();
