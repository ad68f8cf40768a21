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

  /* web/app/tables.js (loaded first): figures with separators and units, sortable tables,
   * filter boxes; campaign.js uses the same */
  var T = window.ptcallTables;
  var fmtNum = T.fmtInt, fmtTime = T.fmtTime;

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

  /* a run's name: its tag name=, else its trace file's base name (`ptcall html --tag`,
   * `db add --tag` set tags) */
  function runName(r) {
    if (r.tags && r.tags.name) return r.tags.name;
    var t = r.trace || "";
    return t.slice(t.lastIndexOf("/") + 1) || r.program;
  }

  function runLabel(r) {
    var t = tagsText(r.tags || {});
    return r.id + ": " + runName(r) + " (" + r.program + ")" + (t ? " " + t : "");
  }

  /* a function's name in a table: whole (it wraps), and in the title too */
  function fnCell(id, name, fq, cls) {
    return el("td", {cls: "fn"}, [el("a", {href: href("/functions/" + id + (fq ? qs(fq) : "")),
                                           cls: cls || "fn-link", title: name, text: name})]);
  }

  /* the runs' names by id (one question per page) */
  var runsDoc = null;
  function allRuns() {
    if (!runsDoc) runsDoc = api("/api/v1/runs");
    return runsDoc.then(function (res) { return res.status === 200 ? res.body.runs : []; });
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
          el("td", {"data-v": String(r.id)}, [el("a", {href: href("/runs/" + r.id),
                                                        cls: "run-link", text: String(r.id)}),
                                              el("span", {cls: "run-name", text: " " + runName(r)})]),
          el("td", {text: r.program}), el("td", {text: fmtDate(r.start_ns)}),
          num(r.duration_ns, fmtTime(r.duration_ns, "ns")), el("td", {text: r.backend}), q,
          num(r.totals.events), num(r.totals.calls), num(r.functions),
          el("td", {cls: "tags", text: tagsText(r.tags)}),
          el("td", {text: r.host})]);
      });
      show([el("h1", {text: "Runs"}), filterForm("/runs", params),
            el("p", {id: "count", text: runs.length + " runs"}),
            T.tableWithFilter(table("runs", ["run", "program", "started (UTC)", "duration",
                                             "backend", "quality", "events", "calls",
                                             "functions", "tags", "host"], rows), -1,
                              "name, program or tag")]);
    });
  }

  /* ---- hot functions ------------------------------------------------------------------- */

  var STATS = ["sum", "mean", "median", "max", "min", "stddev"];
  // what a demoted function is (docs/usage.md, Traces recorded within a budget)
  var DEMOTED = "traced until a budget's governor demoted it, counted after: its calls are " +
                "exact, its times are of its calls before the demotion";

  /* Horizontal bars, one per function, the whole name above its bar and the value (with its
   * unit) at the bar's end: every bar labelled, no name cut. SVG text is set as text. */
  function bars(container, labels, values, unit) {
    if (!values.length) return;
    var longest = Math.max.apply(null, labels.map(function (l) { return l.length; }));
    var W = Math.max(700, Math.min(1100, document.body.clientWidth - 40), 7.3 * longest + 20);
    var VAL = 130, ROW = 34, max = Math.max.apply(null, values.concat([0])) || 1;
    var svg = svgEl("svg", {"class": "hbars", width: W, height: 8 + values.length * ROW,
                            role: "img"});
    values.forEach(function (v, i) {
      var y = 4 + i * ROW, w = Math.max(1, (W - VAL - 16) * (v || 0) / max);
      var shown = unit === "" ? fmtNum(v) + " calls" : fmtTime(v, unit);
      var g = svgEl("g", {"class": "hbar", "data-v": String(v), "data-rank": String(i + 1)});
      g.appendChild(svgEl("title", {}, labels[i] + ": " + shown));
      g.appendChild(svgEl("text", {x: 6, y: y + 12, "class": "name"}, labels[i]));
      g.appendChild(svgEl("rect", {"class": "bar", x: 6, y: y + 16, width: w, height: 13}));
      g.appendChild(svgEl("text", {x: 12 + w, y: y + 27, "class": "val"}, shown));
      svg.appendChild(g);
    });
    container.appendChild(svg);
  }

  /* The hot page is about one program unless asked for all (program=*): by default the
   * program of the most recent run the filters keep. A picker lists the programs stored. */
  function hotProgram(params) {
    var f = new URLSearchParams();
    ["tag", "runs", "since", "until"].forEach(function (k) {
      params.getAll(k).forEach(function (v) { f.append(k, v); });
    });
    var listed = FILE ? allRuns() : api("/api/v1/runs" + qs(f)).then(function (res) {
      return res.status === 200 ? res.body.runs : [];
    });
    return Promise.all([allRuns(), listed]).then(function (x) {
      var programs = [];
      x[0].forEach(function (r) { if (programs.indexOf(r.program) < 0) programs.push(r.program); });
      programs.sort();
      var chosen = params.getAll("program");
      if (!chosen.length && x[1].length) {
        var last = x[1].reduce(function (a, r) {
          return r.start_ns > a.start_ns || (r.start_ns === a.start_ns && r.id > a.id) ? r : a;
        });
        chosen = [last.program];
      }
      return {programs: programs, chosen: chosen};
    });
  }

  function programPicker(pp, params) {
    var s = el("select", {id: "program-picker", name: "program"});
    var cur = pp.chosen.length === 1 ? pp.chosen[0] : pp.chosen.length ? "" : "*";
    var opts = [["*", "all programs"]].concat(pp.programs.map(function (p) { return [p, p]; }));
    if (cur === "") opts.push(["", pp.chosen.join(", ")]);
    opts.forEach(function (o) {
      var e = el("option", {value: o[0], text: o[1]});
      if (o[0] === cur) e.selected = true;
      s.appendChild(e);
    });
    s.addEventListener("change", function () {
      var p = new URLSearchParams(params);
      p.delete("program");
      if (s.value !== "") p.set("program", s.value);
      location.href = href("/hot" + qs(p));
      if (FILE) route();
    });
    return el("label", {cls: "picker"}, ["program ", s]);
  }

  function pageHot() {
    var params = query();
    hotProgram(params).then(function (pp) { hotWith(params, pp); });
  }

  function hotWith(params, pp) {
    var p = new URLSearchParams(params);
    p.delete("program");
    pp.chosen.forEach(function (x) { if (x !== "*") p.append("program", x); });
    var path = "/api/v1/hot" + qs(p);
    /* the report file holds the hot answer over all runs and one per program */
    if (FILE) path = pp.chosen.length === 1 && pp.chosen[0] !== "*" ?
                     "/api/v1/hot?program=" + pp.chosen[0] : "/api/v1/hot";
    api(path).then(function (res) {
      if (res.status !== 200) return fail(res);
      var h = res.body;
      var unit = h.time_unit;
      var fq = new URLSearchParams();
      ["tag", "runs", "since", "until"].forEach(function (k) {
        params.getAll(k).forEach(function (v) { fq.append(k, v); });
      });
      pp.chosen.forEach(function (x) { if (x !== "*") fq.append("program", x); });
      var lacking = 0;
      var rows = h.functions.map(function (f) {
        var st = function (m, s) { return f[m] ? f[m][s] : null; };
        /* the statistics count a run that did not call the function as 0 (as db query and
         * report do): said in words where that is so */
        var missing = h.nruns - f.runs;
        if (missing > 0) lacking++;
        return el("tr", {"data-function": String(f.id)}, [
          num(f.rank), fnCell(f.id, f.name, fq),
          el("td", {text: f.module}), num(f.runs, fmtNum(f.runs) + " of " + fmtNum(h.nruns)),
          num(st("calls", "sum")), num(st("calls", "mean")), num(st("calls", "median")),
          num(st("calls", "stddev")),
          num(st("self", "sum"), fmtTime(st("self", "sum"), unit)),
          num(st("self", "mean"), fmtTime(st("self", "mean"), unit)),
          num(st("self", "median"), fmtTime(st("self", "median"), unit)),
          num(st("self", "stddev"), fmtTime(st("self", "stddev"), unit)),
          num(st("total", "sum"), fmtTime(st("total", "sum"), unit)),
          num(st("total", "mean"), fmtTime(st("total", "mean"), unit)),
          el("td", {cls: "note", text: missing > 0 ? "median over " + fmtNum(h.nruns) +
            " runs, " + fmtNum(missing) + " of which did not call it (they count 0)" : ""})]);
      });
      var chart = el("div", {id: "hot-chart", cls: "chart"});
      var topN = h.functions.slice(0, 20);
      var ext = [select("sort", ["", "calls", "self", "total"], params.get("sort")),
                 select("stat", [""].concat(STATS), params.get("stat")),
                 el("label", null, ["top ", el("input", {name: "top", size: "4",
                                                         value: params.get("top") || ""})])];
      var form = filterForm("/hot", params, ext);
      /* the program is the picker's: the form's own program box would fight it */
      if (form) form.querySelector("input[name=program]").parentNode.remove();
      var names = {};
      return allRuns().then(function (all) {
        all.forEach(function (r) { names[r.id] = runName(r); });
        var which = pp.chosen.length === 1 && pp.chosen[0] === "*" ? "all programs" :
                    "program " + pp.chosen.join(", ");
        show([el("h1", {text: "Hot functions"}), programPicker(pp, params), form,
              el("p", {id: "summary", text: which + ": over " + fmtNum(h.nruns) + " runs (" +
                h.runs.map(function (id) { return id + " " + (names[id] || ""); }).join(", ") +
                "), ranked by the " + h.stat + " of " + h.sort +
                (h.mixed_time_units ? "; the runs mix time units: calls only" : "") +
                (h.more ? "; " + fmtNum(h.more) + " more functions not shown" : "")}),
              lacking ? el("p", {id: "median-note", cls: "note", text: lacking + " of the " +
                h.functions.length + " functions shown were not called in every one of the " +
                fmtNum(h.nruns) + " runs: their means, medians and spreads count those runs as " +
                "0 (the note column says how many); choose one program, or runs= that call " +
                "them, to compare like with like"}) : null,
              el("h2", {text: "Top " + topN.length + " by " + h.stat + " of " + h.sort}), chart,
              T.tableWithFilter(table("hot", ["rank", "function", "module", "runs", "calls sum",
                "calls mean", "calls median", "calls stddev (n\u22121)", "self sum",
                "self mean", "self median", "self stddev (n\u22121)", "total sum",
                "total mean", "note"], rows), 1, "function name")]);
        bars(chart, topN.map(function (f) { return f.name; }),
             topN.map(function (f) { return f[h.sort] ? f[h.sort][h.stat] : 0; }),
             h.sort === "calls" ? "" : unit);
      });
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
    return T.tableWithFilter(table(id, ["function", "calls", "runs"], edges.map(function (e) {
      return el("tr", {"data-function": String(e.id)}, [fnCell(e.id, e.name, fq, "edge-link"),
                                                         num(e.calls), num(e.runs)]);
    })), 0, "function name");
  }

  function pageFunction(id) {
    var params = query();
    Promise.all([api("/api/v1/functions/" + id + (FILE ? "" : qs(params))), allRuns()])
    .then(function (x) {
      var res = x[0], names = {};
      x[1].forEach(function (r) { names[r.id] = runName(r); });
      if (res.status !== 200) return fail(res);
      var d = res.body, f = d.function;
      var rows = d.runs.map(function (p) {
        // demoted in that run by a budget's governor: its times stop at the demotion
        var until = p.demoted ? " (until demoted)" : "";
        return el("tr", p.demoted ? {"data-run": String(p.run), cls: "demoted", title: DEMOTED}
                                  : {"data-run": String(p.run)}, [
          el("td", {"data-v": String(p.run)}, [el("a", {href: href("/runs/" + p.run),
                                                        cls: "run-link", text: String(p.run)}),
                                              el("span", {cls: "run-name",
                                                          text: " " + (names[p.run] || "")})]),
          el("td", {text: p.program}), el("td", {text: fmtDate(p.start_ns)}),
          num(p.calls), num(p.self, fmtTime(p.self, p.time_unit) + until),
          num(p.total, fmtTime(p.total, p.time_unit) + until)]);
      });
      var chart = el("div", {id: "function-chart", cls: "chart"});
      var cgRun = d.runs.filter(function (p) { return p.called; }).pop();
      var cgBox = el("div", {id: "callgraph-area"});
      show([el("h1", {id: "function-name", text: f.name}),
            el("p", {cls: "where", text: f.module + (f.file ? "  " + f.file + ":" + f.line : "") +
              (f.linkage_name !== f.name ? "  (" + f.linkage_name + ")" : "")}),
            el("h2", {text: "Calls, self and total time, run by run"}), chart,
            T.tableWithFilter(table("function-runs", ["run", "program", "started (UTC)",
                                                      "calls", "self", "total"], rows), -1,
                              "run name or program"),
            el("div", {cls: "cols"}, [
              el("div", null, [el("h2", {text: "Callers"}), edgeTable("callers", d.callers,
                                                                      params)]),
              el("div", null, [el("h2", {text: "Callees"}), edgeTable("callees", d.callees,
                                                                      params)])]),
            cgRun ? el("h2", {text: "Callers and callees in run " + cgRun.run}) : null, cgBox]);
      lines(chart, d.runs);
      // the function's focused call graph in the latest run that called it (callgraph.js)
      if (cgRun) window.ptcallCallgraph.mount(cgBox, {run: cgRun.run, api: api, href: href,
                                                      file: FILE, focus: Number(id)});
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

  /* the run's threads, read from its trace file (the database keeps none): a table, or why
   * not (the flame graph's 410 when the file is not the one stored) */
  function threads(box, path) {
    api(path).then(function (res) {
      if (res.status !== 200) {
        box.appendChild(el("p", {cls: "error", id: "threads-error",
                                 "data-status": String(res.status),
                                 text: res.body && res.body.error ? res.body.error :
                                       "HTTP " + res.status}));
        return;
      }
      var unit = res.body.time_unit;
      /* times from the run's first event (the trace's clock starts anywhere) */
      var t0 = Math.min.apply(null, res.body.threads.map(function (t) {
        return t.first === null ? Infinity : t.first; }));
      var rel = function (v) { return v === null ? "-" : "+" + fmtTime(v - t0, unit); };
      var rows = res.body.threads.map(function (t) {
        return el("tr", {"data-tid": String(t.tid)}, [
          num(t.tid, String(t.tid)), el("td", {cls: "fn", text: t.name === null ? "-" : t.name}),
          el("td", {cls: "fn", text: (t.process === null ? "-" : t.process) + " (" + t.pid + ")"}),
          num(t.calls), num(t.events),
          num(t.first, rel(t.first)), num(t.last, rel(t.last)),
          num(t.last !== null && t.first !== null ? t.last - t.first : null,
              t.last !== null ? fmtTime(t.last - t.first, unit) : "-"),
          num(t.gaps), num(t.lost_events)]);
      });
      box.appendChild(T.tableWithFilter(table("run-threads", ["tid", "name", "process", "calls",
        "events", "first event", "last event", "span", "gaps", "lost events"], rows), 1,
        "thread name"));
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
                  ["events", fmtNum(r.totals.events)], ["gaps", fmtNum(r.totals.gaps)],
                  ["lost events", fmtNum(r.totals.lost_events)], ["trace", r.trace],
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
      // a budget's governor demoted functions after the pilot's choice: traced until then,
      // counted after (their state stays traced; their times stop at the demotion)
      if (r.demoted_functions || r.budget_demotions)
        info.push(["governor", r.demoted_functions + " function(s) demoted in " +
                   r.budget_demotions + " demotion(s): traced until then, counted after " +
                   "(calls exact; times only of the calls before the demotion)"]);
      var dl = el("dl", {id: "run-info"});
      info.forEach(function (kv) {
        dl.appendChild(el("dt", {text: kv[0]}));
        dl.appendChild(el("dd", {text: kv[1]}));
      });
      var rows = d.functions.map(function (f) {
        return el("tr", {"data-function": String(f.id)}, [
          fnCell(f.id, f.name, null),
          el("td", {text: f.module}), num(f.calls), num(f.self, fmtTime(f.self, unit)),
          num(f.total, fmtTime(f.total, unit)),
          f.demoted ? el("td", {cls: "state demoted", text: "demoted", title: DEMOTED})
                    : el("td", {cls: "state", text: f.state || "traced"})]);
      });
      var flameBox = el("div", {id: "flame-box"}), cgBox = el("div", {id: "callgraph-area"});
      var threadsBox = el("div", {id: "threads-box"});
      var cmp = FILE ? null : el("p", null, [el("a", {href: "/diff?base=" + r.id,
                                                     text: "compare with another run"}), " · ",
                                             el("a", {href: "/runs/" + r.id + "/timeline",
                                                     id: "timeline-link", text: "timeline"})]);
      show([el("h1", {text: "Run " + r.id + ": " + runName(r) + " (" + r.program + ")"}), dl, cmp,
            el("h2", {text: "Functions (by " + d.sort + ")"}),
            T.tableWithFilter(table("run-functions", ["function", "module", "calls", "self",
                                                      "total", "state"], rows), 0,
                              "function name"),
            d.more ? el("p", {text: d.more + " more functions not shown"}) : null,
            el("h2", {text: "Call graph"}), cgBox,
            el("h2", {text: "Flame graph"}), flameBox,
            el("h2", {text: "Threads"}), threadsBox]);
      if (window.ptcallFlame) window.ptcallFlame.run(flameBox, r.id, r.timed, SHARED); /* flame.js */
      else flame(flameBox, d.flame_graph);
      threads(threadsBox, "/api/v1/runs/" + r.id + "/threads");
      // the call graph laid out by Graphviz (callgraph.js)
      window.ptcallCallgraph.mount(cgBox, {run: r.id, api: api, href: href, file: FILE});
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
          var o = el("option", {value: String(r.id), text: runLabel(r)});
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
        if (params.get("rank")) p.set("rank", params.get("rank"));
        location.href = href("/diff" + qs(p));
        if (FILE) route();
      });
      if (!base || !nw) {
        show([el("h1", {text: "Compare two runs"}), f]);
        return;
      }
      var anyway = params.get("allow_different") === "1";
      /* rank=MEASURE.abs|MEASURE.pct: the API ranks by the measure's absolute change (and
       * keeps the top 100 of it); the page orders those by the chosen key */
      var rank = /^(calls|self|total)\.(abs|pct)$/.test(params.get("rank") || "") ?
                 params.get("rank") : "";
      var rankM = rank ? rank.split(".")[0] : "";
      api("/api/v1/diff?base=" + encodeURIComponent(base) + "&new=" +
          encodeURIComponent(nw) + (anyway && !FILE ? "&allow_different=1" : "") +
          (rankM && !FILE ? "&sort=" + rankM : "") +
          (params.get("top") && !FILE ? "&top=" + encodeURIComponent(params.get("top")) : ""))
      .then(function (res) {
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
        if (!rank) rank = d.sort + ".abs";
        var rm = rank.split(".")[0], byPct = rank.split(".")[1] === "pct";
        var rows = d.functions.map(function (x) {
          var cells = [fnCell(x.id, x.name, null),
                       el("td", {cls: "st-" + x.status, text: x.status})];
          ["calls", "self", "total"].forEach(function (m) {
            var v = x[m];
            var fmt = m === "calls" ? fmtNum : function (t) { return fmtTime(t, unit); };
            if (!v) cells.push(num(null), num(null), num(null), num(null));
            else {
              var pc = T.pct(v.base, v.change);
              cells.push(num(v.base, fmt(v.base)), num(v["new"], fmt(v["new"])),
                         num(v.change, (v.change > 0 ? "+" : "") + fmt(v.change)),
                         el("td", {cls: "num pct", "data-v": pc === null ? "" : String(pc),
                                   text: pc === null ? (x.status === "new" ? "new" :
                                     v.change ? "-" : "0 %") : T.fmtPct(pc)}));
            }
          });
          /* coloured by the ranked measure's change: less (faster, fewer calls) is better;
           * the sign and the % say the same in text */
          var c = x[rm] ? x[rm].change : null;
          var tr = el("tr", {"data-function": String(x.id),
                             cls: c < 0 ? "better" : c > 0 ? "worse" : ""}, cells);
          var p = x[rm] ? T.pct(x[rm].base, x[rm].change) : null;
          /* what the ranking orders by: a new or gone function's % is unbounded: first */
          tr.dataset.rank = String(byPct ? (p === null ? (c ? Infinity : 0) : Math.abs(p))
                                         : Math.abs(c || 0));
          return tr;
        });
        rows.sort(function (a, b) { return Number(b.dataset.rank) - Number(a.dataset.rank); });
        var rsel = el("select", {id: "diff-rank", name: "rank"});
        ["total", "self", "calls"].forEach(function (m) {
          [["abs", "largest change of " + m], ["pct", "largest % change of " + m]].forEach(function (k) {
            var o = el("option", {value: m + "." + k[0], text: k[1]});
            if (m + "." + k[0] === rank) o.selected = true;
            rsel.appendChild(o);
          });
        });
        rsel.addEventListener("change", function () {
          var p = new URLSearchParams(params);
          p.set("rank", rsel.value);
          location.href = href("/diff" + qs(p));
          if (FILE) route();
        });
        var heads = ["function", "status"];
        ["calls", "self", "total"].forEach(function (m) {
          heads.push(m + " before", m + " after", m + " change", m + " % change");
        });
        var flameDiff = el("div", {id: "flame-diff-box"}); /* flame.js */
        show([el("h1", {text: "Run " + d.base.id + " \u2192 run " + d.new.id}), f,
              el("p", null, [el("label", null, ["rank by ", rsel])]),
              el("p", {id: "diff-order", text: (byPct ? "largest % change of " :
                       "largest change of ") + rm + " first" +
                       (d.more ? "; " + fmtNum(d.more) + " more functions not shown" : "")}),
              el("p", {cls: "legend", id: "diff-legend"}, [
                el("span", {cls: "better", text: "better: less " + (rm === "calls" ? "calls" :
                            rm + " time") + " in run " + d.new.id + " (\u2212)"}),
                el("span", {cls: "worse", text: "worse: more (+)"}),
                "coloured by the change of " + rm + "; the sign and % say the same"]),
              T.tableWithFilter(table("diff", heads, rows), 0, "function name"),
              window.ptcallFlame ? el("h2", {text: "Differential flame graph"}) : null, flameDiff]);
        if (window.ptcallFlame)
          window.ptcallFlame.diff(flameDiff, d.base.id, d["new"].id, d.base.timed && d["new"].timed, SHARED);
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
