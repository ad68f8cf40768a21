/* ptcall's web views (docs/web.md): every page is filled from the JSON API (/api/v1/...), or,
 * in the self-contained report of `ptcall html`, from the same answers embedded in the file.
 * Every string from the database is set with textContent or as an attribute value through
 * the DOM, never parsed as markup, so a function called <script>...</script> is shown as
 * text; the Content-Security-Policy forbids inline script besides. */
"use strict";

(function () {
  var FILE = document.body ? document.body.dataset.mode === "file" : false;
  var DATA = null;

  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs)
      for (var k in attrs) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "cls") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      }
    (kids || []).forEach(function (c) {
      if (c !== null && c !== undefined)
        e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  /* a link to a page: /PATH?QUERY on the server, #/PATH?QUERY in the report file */
  function href(path) {
    return FILE ? "#" + path : path;
  }

  function api(path) {
    if (FILE) {
      var d = DATA[path];
      if (d === undefined)
        return Promise.resolve({status: 404, body: {error: "this report holds no " + path +
          " (ptcall html keeps the views of its runs; 'ptcall serve' shows every view)"}});
      return Promise.resolve({status: d.status || 200, body: d});
    }
    return fetch(path, {headers: {"Accept": "application/json"}}).then(function (r) {
      return r.json().then(function (b) { return {status: r.status, body: b}; });
    });
  }

  function fmtNum(v) {
    if (v === null || v === undefined) return "-";
    if (Number.isInteger(v)) return String(v);
    return v.toFixed(2);
  }

  function fmtTime(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit !== "ns") return fmtNum(v);
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (v / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (v / 1e3).toFixed(3) + " us";
    return fmtNum(v) + " ns";
  }

  function fmtDate(ns) {
    if (ns === null || ns === undefined) return "-";
    return new Date(ns / 1e6).toISOString().replace("T", " ").replace(/\..*/, "");
  }

  /* a table cell with the exact figure in data-v (what the browser tests compare) */
  function num(v, shown) {
    return el("td", {cls: "num", "data-v": v === null || v === undefined ? "" : String(v),
                     text: shown !== undefined ? shown : fmtNum(v)});
  }

  function table(id, heads, rows) {
    var thead = el("thead", null, [el("tr", null, heads.map(function (h) {
      return el("th", {text: h});
    }))]);
    return el("table", {id: id}, [thead, el("tbody", null, rows)]);
  }

  function main() { return document.getElementById("main"); }

  function show(nodes) {
    var m = main();
    m.textContent = "";
    nodes.forEach(function (n) { if (n) m.appendChild(n); });
    /* when the page was filled, in ms since the navigation started (bench/web.py) */
    document.body.dataset.readyMs = String(Math.round(performance.now()));
    document.body.dataset.ready = "1";
  }

  function fail(res) {
    var msg = res.body && res.body.error ? res.body.error : "HTTP " + res.status;
    show([el("p", {cls: "error", id: "error", "data-status": String(res.status), text: msg})]);
  }

  function query() {
    var q = FILE ? (location.hash.split("?")[1] || "") : location.search.slice(1);
    return new URLSearchParams(q);
  }

  function qs(params) {
    var s = params.toString();
    return s ? "?" + s : "";
  }

  /* the filter form of the runs and hot-function pages (server only: the report file holds
   * the answers for its own runs) */
  function filterForm(page, params, extra) {
    if (FILE) return null;
    var f = el("form", {method: "get", action: page, id: "filters", cls: "filters"});
    function input(name, label, ph) {
      f.appendChild(el("label", null, [label + " ",
        el("input", {name: name, value: params.get(name) || "", placeholder: ph})]));
    }
    input("tag", "tag", "NAME[=VALUE]");
    input("program", "program", "GLOB");
    input("runs", "runs", "all, 3,5-9, last:N");
    (extra || []).forEach(function (x) { f.appendChild(x); });
    f.appendChild(el("button", {type: "submit", text: "Apply"}));
    /* empty fields are left out of the URL */
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var p = new URLSearchParams();
      Array.prototype.forEach.call(f.elements, function (e) {
        if (e.name && e.value) p.append(e.name, e.value);
      });
      location.href = page + qs(p);
    });
    return f;
  }

  function select(name, words, cur) {
    var s = el("select", {name: name});
    words.forEach(function (w) {
      var o = el("option", {value: w, text: w || "(default)"});
      if (w === (cur || "")) o.selected = true;
      s.appendChild(o);
    });
    return el("label", null, [name + " ", s]);
  }

  function tagsText(tags) {
    return Object.keys(tags).map(function (k) { return k + "=" + tags[k]; }).join(" ");
  }

  /* ---- runs ---------------------------------------------------------------------------- */

  function pageRuns() {
    var params = query();
    api("/api/v1/runs" + qs(params)).then(function (res) {
      if (res.status !== 200) return fail(res);
      var runs = res.body.runs;
      var rows = runs.map(function (r) {
        var q = el("td", {cls: "quality q-" + r.quality.toLowerCase(), text: r.quality});
        if (r.totals.gaps || r.totals.lost_events)
          q.title = r.totals.gaps + " gaps, " + r.totals.lost_events + " lost events";
        return el("tr", {"data-run": String(r.id)}, [
          el("td", null, [el("a", {href: href("/runs/" + r.id), cls: "run-link",
                                   text: String(r.id)})]),
          el("td", {text: r.program}), el("td", {text: fmtDate(r.start_ns)}),
          num(r.duration_ns, fmtTime(r.duration_ns, "ns")), el("td", {text: r.backend}), q,
          num(r.totals.events), num(r.totals.calls), num(r.functions),
          el("td", {cls: "tags", text: tagsText(r.tags)}),
          el("td", {text: r.host})]);
      });
      show([el("h1", {text: "Runs"}), filterForm("/runs", params),
            el("p", {id: "count", text: runs.length + " runs"}),
            table("runs", ["run", "program", "started (UTC)", "duration", "backend", "quality",
                           "events", "calls", "functions", "tags", "host"], rows)]);
    });
  }

  /* ---- hot functions ------------------------------------------------------------------- */

  var STATS = ["sum", "mean", "median", "max", "min", "stddev"];

  function bars(container, labels, values, unit) {
    if (typeof uPlot === "undefined" || !values.length) return;
    var xs = values.map(function (_, i) { return i + 1; });
    var opts = {
      width: Math.min(1100, Math.max(400, document.body.clientWidth - 40)), height: 260,
      legend: {show: false},
      scales: {x: {time: false, range: [0.5, values.length + 0.5]}},
      axes: [{values: function (u, vals) {
                return vals.map(function (v) {
                  var s = labels[v - 1];
                  return Number.isInteger(v) && s !== undefined ? s.slice(0, 14) : "";
                });
              }, rotate: 0, size: 40},
             {values: function (u, vals) { return vals.map(function (v) {
                return fmtTime(v, unit); }); }, size: 90}],
      series: [{}, {label: "value", fill: "rgba(214,90,49,0.7)", stroke: "rgb(170,60,30)",
                    paths: uPlot.paths.bars({size: [0.7, 60]}), points: {show: false}}]
    };
    new uPlot(opts, [xs, values], container);
  }

  function pageHot() {
    var params = query();
    var p = new URLSearchParams(params);
    if (FILE) p = new URLSearchParams();
    api("/api/v1/hot" + qs(p)).then(function (res) {
      if (res.status !== 200) return fail(res);
      var h = res.body;
      var unit = h.time_unit;
      var fq = new URLSearchParams();
      ["tag", "program", "runs", "since", "until"].forEach(function (k) {
        params.getAll(k).forEach(function (v) { fq.append(k, v); });
      });
      var rows = h.functions.map(function (f) {
        var st = function (m, s) { return f[m] ? f[m][s] : null; };
        return el("tr", {"data-function": String(f.id)}, [
          num(f.rank),
          el("td", null, [el("a", {href: href("/functions/" + f.id + qs(fq)), cls: "fn-link",
                                   text: f.name})]),
          el("td", {text: f.module}), num(f.runs),
          num(st("calls", "sum")), num(st("calls", "mean")), num(st("calls", "median")),
          num(st("calls", "stddev")),
          num(st("self", "sum"), fmtTime(st("self", "sum"), unit)),
          num(st("self", "mean"), fmtTime(st("self", "mean"), unit)),
          num(st("self", "median"), fmtTime(st("self", "median"), unit)),
          num(st("self", "stddev"), fmtTime(st("self", "stddev"), unit)),
          num(st("total", "sum"), fmtTime(st("total", "sum"), unit)),
          num(st("total", "mean"), fmtTime(st("total", "mean"), unit))]);
      });
      var chart = el("div", {id: "hot-chart", cls: "chart"});
      var topN = h.functions.slice(0, 20);
      var ext = [select("sort", ["", "calls", "self", "total"], params.get("sort")),
                 select("stat", [""].concat(STATS), params.get("stat")),
                 el("label", null, ["top ", el("input", {name: "top", size: "4",
                                                         value: params.get("top") || ""})])];
      show([el("h1", {text: "Hot functions"}), filterForm("/hot", params, ext),
            el("p", {id: "summary", text: "over " + h.nruns + " runs (" + h.runs.join(", ") +
              "), ranked by the " + h.stat + " of " + h.sort +
              (h.mixed_time_units ? "; the runs mix time units: calls only" : "") +
              (h.more ? "; " + h.more + " more functions not shown" : "")}),
            el("h2", {text: "Top " + topN.length + " by " + h.stat + " of " + h.sort}), chart,
            table("hot", ["rank", "function", "module", "runs", "calls sum", "calls mean",
                          "calls median", "calls stddev (n\u22121)", "self sum", "self mean",
                          "self median", "self stddev (n\u22121)", "total sum", "total mean"],
                  rows)]);
      bars(chart, topN.map(function (f) { return f.name; }),
           topN.map(function (f) { return f[h.sort] ? f[h.sort][h.stat] : 0; }),
           h.sort === "calls" ? "" : unit);
    });
  }

  /* ---- one function -------------------------------------------------------------------- */

  function lines(container, pts) {
    if (typeof uPlot === "undefined" || !pts.length) return;
    var xs = pts.map(function (_, i) { return i + 1; });
    var timed = pts.some(function (p) { return p.total !== null; });
    var unit = pts[0].time_unit;
    var series = [{label: "run"}, {label: "calls", stroke: "rgb(40,90,200)", scale: "calls",
                                   width: 2}];
    var data = [xs, pts.map(function (p) { return p.calls; })];
    var axes = [{values: function (u, vals) { return vals.map(function (v) {
                  return Number.isInteger(v) && pts[v - 1] ? "run " + pts[v - 1].run : ""; });
                }},
                {scale: "calls", label: "calls", size: 70}];
    if (timed) {
      series.push({label: "self", stroke: "rgb(214,90,49)", scale: "time", width: 2});
      series.push({label: "total", stroke: "rgb(90,160,60)", scale: "time", width: 2});
      data.push(pts.map(function (p) { return p.self; }));
      data.push(pts.map(function (p) { return p.total; }));
      axes.push({scale: "time", side: 1, label: "time", size: 90, grid: {show: false},
                 values: function (u, vals) { return vals.map(function (v) {
                   return fmtTime(v, unit); }); }});
    }
    new uPlot({width: Math.min(1100, Math.max(400, document.body.clientWidth - 40)),
               height: 280, scales: {x: {time: false}}, series: series, axes: axes},
              data, container);
  }

  function edgeTable(id, edges, fq) {
    return table(id, ["function", "calls", "runs"], edges.map(function (e) {
      return el("tr", null, [
        el("td", null, [el("a", {href: href("/functions/" + e.id + qs(fq)), text: e.name})]),
        num(e.calls), num(e.runs)]);
    }));
  }

  function pageFunction(id) {
    var params = query();
    api("/api/v1/functions/" + id + (FILE ? "" : qs(params))).then(function (res) {
      if (res.status !== 200) return fail(res);
      var d = res.body, f = d.function;
      var rows = d.runs.map(function (p) {
        return el("tr", {"data-run": String(p.run)}, [
          el("td", null, [el("a", {href: href("/runs/" + p.run), cls: "run-link",
                                   text: String(p.run)})]),
          el("td", {text: p.program}), el("td", {text: fmtDate(p.start_ns)}),
          num(p.calls), num(p.self, fmtTime(p.self, p.time_unit)),
          num(p.total, fmtTime(p.total, p.time_unit))]);
      });
      var chart = el("div", {id: "function-chart", cls: "chart"});
      show([el("h1", {id: "function-name", text: f.name}),
            el("p", {cls: "where", text: f.module + (f.file ? "  " + f.file + ":" + f.line : "") +
              (f.linkage_name !== f.name ? "  (" + f.linkage_name + ")" : "")}),
            el("h2", {text: "Calls, self and total time, run by run"}), chart,
            table("function-runs", ["run", "program", "started (UTC)", "calls", "self",
                                    "total"], rows),
            el("div", {cls: "cols"}, [
              el("div", null, [el("h2", {text: "Callers"}), edgeTable("callers", d.callers,
                                                                      params)]),
              el("div", null, [el("h2", {text: "Callees"}), edgeTable("callees", d.callees,
                                                                      params)])])]);
      lines(chart, d.runs);
    });
  }

  /* ---- one run: figures, call graph, flame graph ---------------------------------------- */

  var SVGNS = "http://www.w3.org/2000/svg";

  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* the call graph among the run's hottest functions, in layers by the longest call chain
   * from a root (a function no shown function calls), drawn as SVG elements */
  function callGraph(fns, edges, unit) {
    var byId = {}, depth = {}, incoming = {};
    fns.forEach(function (f) { byId[f.id] = f; incoming[f.id] = 0; });
    edges = edges.filter(function (e) { return byId[e.caller_id] && byId[e.callee_id] &&
                                               e.caller_id !== e.callee_id; });
    edges.forEach(function (e) { incoming[e.callee_id]++; });
    fns.forEach(function (f) { depth[f.id] = 0; });
    /* longest path, bounded by the number of functions (cycles stop growing then) */
    for (var it = 0; it < fns.length; it++) {
      var moved = false;
      edges.forEach(function (e) {
        if (depth[e.callee_id] < depth[e.caller_id] + 1 && depth[e.caller_id] + 1 < fns.length) {
          depth[e.callee_id] = depth[e.caller_id] + 1;
          moved = true;
        }
      });
      if (!moved) break;
    }
    var layers = [];
    fns.forEach(function (f) { (layers[depth[f.id]] = layers[depth[f.id]] || []).push(f); });
    layers = layers.filter(Boolean);
    var W = 190, H = 44, GX = 40, GY = 50, pos = {};
    var width = 0;
    layers.forEach(function (l, y) {
      l.forEach(function (f, x) { pos[f.id] = {x: 10 + x * (W + GX), y: 10 + y * (H + GY)}; });
      width = Math.max(width, 20 + l.length * (W + GX));
    });
    var svg = svgEl("svg", {id: "callgraph", width: width, height: 20 + layers.length * (H + GY),
                            role: "img"});
    var maxCalls = Math.max.apply(null, edges.map(function (e) { return e.calls; }).concat([1]));
    edges.forEach(function (e) {
      var a = pos[e.caller_id], b = pos[e.callee_id];
      var x1 = a.x + W / 2, y1 = a.y + H, x2 = b.x + W / 2, y2 = b.y;
      if (b.y <= a.y) { y1 = a.y + H / 2; y2 = b.y + H / 2; }
      var g = svgEl("g", {"class": "edge", "data-caller": e.caller_id, "data-callee": e.callee_id,
                          "data-calls": e.calls});
      /* an edge that skips a layer, or goes back up, bows out to the right so that it does
       * not run through the boxes between its ends */
      var skip = b.y > a.y + H + GY || b.y <= a.y;
      var cx = (x1 + x2) / 2 + (skip ? W / 2 + 40 : 0), cy = (y1 + y2) / 2;
      g.appendChild(svgEl("path", {d: "M" + x1 + " " + y1 + " Q" + cx + " " + cy + " " + x2 +
                                      " " + y2, fill: "none",
                                   "stroke-width": 1 + 4 * e.calls / maxCalls}));
      g.appendChild(svgEl("text", {x: (x1 + 2 * cx + x2) / 4 + 4, y: cy}, String(e.calls)));
      svg.appendChild(g);
    });
    fns.forEach(function (f) {
      var p = pos[f.id];
      var g = svgEl("g", {"class": "node", "data-function": f.id});
      var a = document.createElementNS(SVGNS, "a");
      a.setAttribute("href", href("/functions/" + f.id));
      a.appendChild(svgEl("rect", {x: p.x, y: p.y, width: W, height: H, rx: 4}));
      a.appendChild(svgEl("text", {x: p.x + 6, y: p.y + 17}, f.name.length > 28 ?
                                   f.name.slice(0, 27) + "\u2026" : f.name));
      a.appendChild(svgEl("text", {x: p.x + 6, y: p.y + 35, "class": "sub"},
                          f.calls + " calls" + (f.self !== null ? ", self " +
                          fmtTime(f.self, unit) : "")));
      a.appendChild(svgEl("title", {}, f.name));
      g.appendChild(a);
      svg.appendChild(g);
    });
    return el("div", {cls: "graph-box"}, [svg]);
  }

  function flame(box, url) {
    if (FILE) {
      var d = DATA[url];
      if (d && d.svg_data_uri) box.appendChild(el("img", {id: "flame", alt: "flame graph",
                                                          src: d.svg_data_uri}));
      else box.appendChild(el("p", {cls: "error", id: "flame-error",
                                    text: d && d.error ? d.error : "no flame graph"}));
      return;
    }
    fetch(url).then(function (r) {
      if (r.ok) {
        box.appendChild(el("img", {id: "flame", alt: "flame graph", src: url}));
        return;
      }
      return r.json().then(function (b) {
        box.appendChild(el("p", {cls: "error", id: "flame-error", "data-status": String(r.status),
                                 text: b.error}));
      });
    });
  }

  function pageRun(id) {
    api("/api/v1/runs/" + id).then(function (res) {
      if (res.status !== 200) return fail(res);
      var d = res.body, r = d.run, unit = r.time_unit;
      var info = [["program", r.program], ["command", r.command_line || "-"],
                  ["host", r.host], ["started (UTC)", fmtDate(r.start_ns)],
                  ["duration", fmtTime(r.duration_ns, "ns")],
                  ["exit", r.command ? (r.command.signal !== null ? "signal " + r.command.signal
                                        : "status " + r.command.exit_status) : "-"],
                  ["backend", r.backend + " (" + r.time_unit + ")"], ["quality", r.quality],
                  ["events", String(r.totals.events)], ["gaps", String(r.totals.gaps)],
                  ["lost events", String(r.totals.lost_events)], ["trace", r.trace],
                  ["tags", tagsText(r.tags) || "-"]];
      // a trace that does not hold its threads' whole lives (attach, snapshot) or that ended
      // with calls still running (docs/usage.md, Windows): said, as report says it
      if (r.totals.window_threads)
        info.push(["window", r.totals.window_threads + " thread(s) traced in a window of " +
                   "their life: " + r.totals.entered_before + " call(s) entered before the " +
                   "trace began (their times are lower bounds)"]);
      if (r.totals.still_open)
        info.push(["still open at the end", r.totals.still_open + " call(s), closed when " +
                   "their thread's trace ended (lower bounds)"]);
      // recorded within a budget (docs/usage.md, Traces recorded within a budget): what it
      // was, and the functions counted instead of traced (calls only, no times)
      if (r.budget)
        info.push(["budget", r.budget.kind + " " + (r.budget.kind === "overhead"
                   ? (100 * r.budget.limit).toPrecision(3) + " %" : r.budget.limit + " B/s") +
                   ", chosen by " + r.budget.source + ": " + r.budget.outcome + " (" +
                   r.budget.note + ")"]);
      if (r.counted_functions)
        info.push(["counted", r.counted_functions + " function(s) counted, not traced: " +
                   r.counted_calls + " call(s), exact, with no times"]);
      var dl = el("dl", {id: "run-info"});
      info.forEach(function (kv) {
        dl.appendChild(el("dt", {text: kv[0]}));
        dl.appendChild(el("dd", {text: kv[1]}));
      });
      var rows = d.functions.map(function (f) {
        return el("tr", {"data-function": String(f.id)}, [
          el("td", null, [el("a", {href: href("/functions/" + f.id), cls: "fn-link",
                                   text: f.name})]),
          el("td", {text: f.module}), num(f.calls), num(f.self, fmtTime(f.self, unit)),
          num(f.total, fmtTime(f.total, unit)),
          el("td", {cls: "state", text: f.state || "traced"})]);
      });
      var flameBox = el("div", {id: "flame-box"});
      var cmp = FILE ? null : el("p", null, [el("a", {href: "/diff?base=" + r.id,
                                                     text: "compare with another run"}), " · ",
                                             el("a", {href: "/runs/" + r.id + "/timeline",
                                                     id: "timeline-link", text: "timeline"})]);
      show([el("h1", {text: "Run " + r.id + ": " + r.program}), dl, cmp,
            el("h2", {text: "Functions (by " + d.sort + ")"}),
            table("run-functions", ["function", "module", "calls", "self", "total", "state"], rows),
            d.more ? el("p", {text: d.more + " more functions not shown"}) : null,
            el("h2", {text: "Call graph (the " + Math.min(d.functions.length, 40) +
                            " hottest functions)"}),
            callGraph(d.functions.slice(0, 40), d.edges, unit),
            el("h2", {text: "Flame graph"}), flameBox]);
      flame(flameBox, d.flame_graph);
    });
  }

  /* ---- two runs compared ----------------------------------------------------------------- */

  function pageDiff() {
    var params = query();
    var base = params.get("base"), nw = params.get("new");
    api("/api/v1/runs").then(function (rl) {
      if (rl.status !== 200) return fail(rl);
      var runs = rl.body.runs;
      var f = el("form", {id: "diff-form", cls: "filters"});
      ["base", "new"].forEach(function (n) {
        var s = el("select", {name: n});
        runs.forEach(function (r) {
          var o = el("option", {value: String(r.id), text: r.id + ": " + r.program + " " +
                                tagsText(r.tags)});
          if (String(r.id) === params.get(n)) o.selected = true;
          s.appendChild(o);
        });
        f.appendChild(el("label", null, [n + " ", s]));
      });
      f.appendChild(el("button", {type: "submit", text: "Compare"}));
      f.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var p = new URLSearchParams();
        p.set("base", f.elements.base.value);
        p.set("new", f.elements["new"].value);
        location.href = href("/diff" + qs(p));
        if (FILE) route();
      });
      if (!base || !nw) {
        show([el("h1", {text: "Compare two runs"}), f]);
        return;
      }
      var anyway = params.get("allow_different") === "1";
      api("/api/v1/diff?base=" + encodeURIComponent(base) + "&new=" +
          encodeURIComponent(nw) + (anyway && !FILE ? "&allow_different=1" : "")).then(function (res) {
        if (res.status !== 200) {
          /* the two runs cannot be compared: say why, and keep the form to choose others */
          var msg = res.body && res.body.error ? res.body.error : "HTTP " + res.status;
          var parts = [el("h1", {text: "Compare two runs"}), f,
                       el("p", {cls: "error", id: "error", "data-status": String(res.status),
                                text: msg})];
          if (res.status === 409 && !FILE) {
            var p2 = new URLSearchParams();
            p2.set("base", base);
            p2.set("new", nw);
            p2.set("allow_different", "1");
            parts.push(el("p", null, [el("a", {id: "diff-anyway", href: href("/diff" + qs(p2)),
                                               text: "compare them anyway (functions matched by name)"})]));
          }
          return show(parts);
        }
        var d = res.body, unit = d.base.time_unit;
        var rows = d.functions.map(function (x) {
          var cells = [el("td", null, [el("a", {href: href("/functions/" + x.id),
                                                text: x.name})]),
                       el("td", {cls: "st-" + x.status, text: x.status})];
          ["calls", "self", "total"].forEach(function (m) {
            var v = x[m];
            var fmt = m === "calls" ? fmtNum : function (t) { return fmtTime(t, unit); };
            if (!v) cells.push(num(null), num(null), num(null));
            else cells.push(num(v.base, fmt(v.base)), num(v["new"], fmt(v["new"])),
                            num(v.change, (v.change > 0 ? "+" : "") + fmt(v.change)));
          });
          return el("tr", {"data-function": String(x.id)}, cells);
        });
        show([el("h1", {text: "Run " + d.base.id + " \u2192 run " + d.new.id}), f,
              el("p", {text: "largest change of " + d.sort + " first" +
                       (d.more ? "; " + d.more + " more functions not shown" : "")}),
              table("diff", ["function", "status", "calls before", "calls after",
                             "calls change", "self before", "self after", "self change",
                             "total before", "total after", "total change"], rows)]);
      });
    });
  }

  /* ---- the campaign pages (web/app/campaign.js, loaded before this file) ------------------
   * They build their pages with these same functions, so every string from the database
   * reaches the page through el()'s textContent or an attribute set through the DOM. */

  var SHARED = {el: el, svgEl: svgEl, href: href, api: api, num: num, table: table, show: show,
                fail: fail, query: query, qs: qs, fmtNum: fmtNum, fmtDate: fmtDate,
                tagsText: tagsText, mark: mark};

  /* ---- routing ---------------------------------------------------------------------------- */

  function route() {
    var path = FILE ? (location.hash.slice(1).split("?")[0] || "/hot") : location.pathname;
    var m;
    document.querySelectorAll("nav a").forEach(function (a) { a.classList.remove("here"); });
    if ((m = /^\/runs\/(\d+)$/.exec(path))) return pageRun(m[1]);
    if ((m = /^\/runs\/(\d+)\/timeline$/.exec(path)) && window.ptcallTimeline)
      return window.ptcallTimeline(m[1], SHARED); /* web/app/timeline.js */
    if ((m = /^\/functions\/(\d+)$/.exec(path))) return pageFunction(m[1]);
    if (path === "/hot") { mark("nav-hot"); return pageHot(); }
    if (path === "/diff") { mark("nav-diff"); return pageDiff(); }
    if (path === "/" || path === "/runs") { mark("nav-runs"); return pageRuns(); }
    if (/^\/campaigns(\/|$)/.test(path)) {
      if (typeof window.ptcallCampaigns === "function" &&
          window.ptcallCampaigns(path, SHARED) !== false)
        return;
      return fail({status: 404, body: {error: "no such page: " + path + (FILE ?
        " (the campaign views are in 'ptcall serve')" : "")}});
    }
    fail({status: 404, body: {error: "no such page: " + path}});
  }

  function mark(id) {
    var a = document.getElementById(id);
    if (a) a.classList.add("here");
  }

  function start() {
    FILE = document.body.dataset.mode === "file";
    if (FILE) {
      DATA = JSON.parse(document.getElementById("ptcall-data").textContent);
      window.addEventListener("hashchange", route);
    }
    route();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
