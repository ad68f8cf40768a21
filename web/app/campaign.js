/* ptcall's campaign pages (docs/web.md, Pages): /campaigns, /campaigns/ID and
 * /campaigns/compare?a=SEL&b=SEL, filled from /api/v1/campaigns... (db/ and
 * server/api_campaign*.c answer them). Loaded before app.js, which calls
 * window.ptcallCampaigns(path, shared) for a /campaigns path and hands over its own helpers:
 * every string from the database (program, campaign, tag, host, instance and function
 * names) goes into the page through shared.el's textContent or an attribute set through the
 * DOM, never as markup, as on the other pages. */
"use strict";

(function () {
  var S = null; /* app.js's helpers */

  /* ---- formatting ------------------------------------------------------------------------ */

  var T = window.ptcallTables; /* web/app/tables.js: one copy of the table helpers */
  var fmtInt = T.fmtInt, sortable = T.sortable;

  /* a duration in ms as 1h02m03s, 3m07s, 12.5s */
  function fmtDur(ms) {
    if (ms === null || ms === undefined) return "-";
    var s = ms / 1000;
    if (s < 60) return (Number.isInteger(s) ? String(s) : s.toFixed(1)) + "s";
    var t = Math.floor(s), h = Math.floor(t / 3600), m = Math.floor(t % 3600 / 60), r = t % 60;
    var two = function (x) { return (x < 10 ? "0" : "") + x; };
    return (h ? h + "h" + two(m) + "m" : m + "m") + two(r) + "s";
  }

  function ofTotal(reached, total) {
    if (reached === null || reached === undefined) return "-";
    if (total === null || total === undefined || !total) return fmtInt(reached);
    return fmtInt(reached) + " of " + fmtInt(total) + " (" + (100 * reached / total).toFixed(1) +
           " %)";
  }

  function tagsOf(tags) {
    if (!tags) return "";
    if (Array.isArray(tags))
      return tags.map(function (t) {
        return typeof t === "string" ? t : t.name + (t.value !== undefined && t.value !== null ?
          "=" + t.value : "");
      }).join(" ");
    return S.tagsText(tags);
  }

  function plateauText(c) {
    if (c.last_new_ms === null || c.last_new_ms === undefined) return "-";
    var end = c.campaign_time_ms;
    if (end === null || end === undefined || end <= c.last_new_ms)
      return "new at the end (" + fmtDur(c.last_new_ms) + ")";
    return "since " + fmtDur(c.last_new_ms) + " (" + fmtDur(end - c.last_new_ms) + ")";
  }

  /* when the page's chart was drawn, in ms since the navigation started (after the next
   * frame: what a reader waits for; body[data-ready-ms] is when the tables were filled) */
  function drawn() {
    requestAnimationFrame(function () {
      document.body.dataset.drawnMs = String(Math.round(performance.now()));
    });
  }

  function numCell(v, shown) { return S.num(v, shown !== undefined ? shown : fmtInt(v)); }

  /* ---- the filter form: program=GLOB, tag=K[=V], as the other pages ------------------------ */

  function filterForm(params) {
    var el = S.el;
    var f = el("form", {method: "get", action: "/campaigns", id: "filters", cls: "filters"});
    [["tag", "NAME[=VALUE]"], ["program", "GLOB"]].forEach(function (x) {
      f.appendChild(el("label", null, [x[0] + " ", el("input", {name: x[0], placeholder: x[1],
        value: params.get(x[0]) || ""})]));
    });
    f.appendChild(el("button", {type: "submit", text: "Apply"}));
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var p = new URLSearchParams();
      Array.prototype.forEach.call(f.elements, function (e) {
        if (e.name && e.value) p.append(e.name, e.value);
      });
      location.href = "/campaigns" + S.qs(p);
    });
    return f;
  }

  /* ---- /campaigns ---------------------------------------------------------------------------- */

  function pageList() {
    var el = S.el, params = S.query();
    S.mark("nav-campaigns");
    S.api("/api/v1/campaigns" + S.qs(params)).then(function (res) {
      if (res.status !== 200) return S.fail(res);
      var cs = res.body.campaigns;
      var rows = cs.map(function (c) {
        return el("tr", {"data-campaign": String(c.id)}, [
          numCell(c.id, String(c.id)),
          el("td", {cls: "program", text: c.program}),
          el("td", null, [el("a", {href: "/campaigns/" + c.id, cls: "campaign-link",
                                   text: c.name})]),
          el("td", {cls: "tags", text: tagsOf(c.tags)}),
          el("td", {cls: "hosts", text: (c.hosts || []).join(" ")}),
          numCell(c.instances), numCell(c.inputs), numCell(c.crashes), numCell(c.hangs),
          numCell(c.functions_reached), numCell(c.functions_total),
          numCell(c.blocks_reached), numCell(c.blocks_total),
          numCell(c.campaign_time_ms, fmtDur(c.campaign_time_ms)),
          numCell(c.last_new_ms, plateauText(c))]);
      });
      var t = sortable(S.table("campaigns", ["id", "program", "campaign", "tags", "hosts",
        "instances", "inputs", "crashes", "hangs", "functions reached", "of functions",
        "blocks reached", "of blocks", "campaign time", "plateau (last new coverage)"], rows));
      S.show([el("h1", {text: "Campaigns"}), filterForm(params),
              el("p", {id: "count", text: cs.length + " campaigns" + (!cs.length &&
                params.toString() ? ": none matches the filters (" +
                decodeURIComponent(params.toString()).replace(/&/g, ", ") + ")" : "")}),
              el("p", null, [el("a", {href: "/campaigns/compare", id: "compare-link",
                                      text: "compare campaigns (fuzzer A against B)"})]),
              t]);
      drawn();
    });
  }

  /* ---- coverage curves (uPlot) ----------------------------------------------------------------- */

  /* series of [t_ms, functions, blocks] points, each a step function of time, on one x axis
   * (seconds): every series holds its last value until its next point, and nothing before
   * its first */
  function align(list, col) {
    var xs = {};
    list.forEach(function (s) { s.points.forEach(function (p) { xs[p[0]] = 1; }); });
    var x = Object.keys(xs).map(Number).sort(function (a, b) { return a - b; });
    var data = [x.map(function (t) { return t / 1000; })];
    list.forEach(function (s) {
      var out = new Array(x.length), j = 0, cur = null;
      for (var i = 0; i < x.length; i++) {
        while (j < s.points.length && s.points[j][0] <= x[i]) {
          cur = s.points[j][col];
          j++;
        }
        out[i] = cur === undefined ? null : cur;
      }
      data.push(out);
    });
    return data;
  }

  var COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];

  /* a vertical line at the plateau (the last new coverage) and one at the campaign's end */
  function marks(plateauS, endS) {
    return {hooks: {draw: [function (u) {
      var ctx = u.ctx;
      [[plateauS, "#b00020", "plateau"], [endS, "#555", "end"]].forEach(function (m) {
        if (m[0] === null || m[0] === undefined) return;
        var x = u.valToPos(m[0], "x", true);
        ctx.save();
        ctx.strokeStyle = m[1];
        ctx.fillStyle = m[1];
        ctx.setLineDash([6, 4]);
        ctx.lineWidth = 1.5 * devicePixelRatio;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.font = (11 * devicePixelRatio) + "px sans-serif";
        ctx.fillText(m[2], x + 4 * devicePixelRatio, u.bbox.top + 12 * devicePixelRatio);
        ctx.restore();
      });
    }]}};
  }

  function chartWidth() {
    return Math.min(1100, Math.max(400, document.body.clientWidth - 60));
  }

  /* the curves of one campaign: the union, each machine, each instance (groups toggled by
   * the checkboxes, each series by its legend entry), functions or blocks */
  function curves(box, c, cv, measure) {
    var el = S.el;
    box.textContent = "";
    if (typeof uPlot === "undefined") return;
    var col = measure === "blocks" ? 2 : 1;
    /* only the groups shown are made into series: a hidden series still costs its legend
     * entry and its share of the layout */
    var on = function (g) { return box.dataset["show" + g] !== "0"; };
    var list = [];
    if (on("union")) list.push({label: "union", group: "union", points: cv.union || []});
    if (on("hosts"))
      (cv.hosts || []).forEach(function (h) {
        list.push({label: "machine " + h.host, group: "hosts", points: h.points});
      });
    if (on("instances"))
      (cv.instances || []).forEach(function (i) {
        list.push({label: i.name + (i.host ? " @ " + i.host : ""), group: "instances",
                   points: i.points});
      });
    var data = align(list, col);
    var endS = c.campaign_time_ms !== null && c.campaign_time_ms !== undefined ?
               c.campaign_time_ms / 1000 : null;
    var plateauS = c.last_new_ms !== null && c.last_new_ms !== undefined ?
                   c.last_new_ms / 1000 : null;
    var xmax = Math.max(endS || 0, data[0].length ? data[0][data[0].length - 1] : 0, 1);
    var series = [{label: "time"}];
    list.forEach(function (s, i) {
      var union = s.group === "union";
      series.push({label: s.label, stroke: union ? "#000" : COLOURS[i % COLOURS.length],
                   width: union ? 3 : s.group === "hosts" ? 2 : 1,
                   dash: s.group === "hosts" ? [8, 4] : undefined,
                   paths: uPlot.paths.stepped({align: 1}), points: {show: false}});
    });
    box.dataset.series = String(list.length);
    box.dataset.xMax = String(xmax);
    box.dataset.plateauS = plateauS === null ? "" : String(plateauS);
    box.dataset.measure = measure;
    var u = new uPlot({width: chartWidth(), height: 320, series: series,
                       scales: {x: {time: false, range: [0, xmax]}},
                       axes: [{label: "campaign time", values: function (u, v) {
                                return v.map(function (x) { return fmtDur(x * 1000); }); }},
                              {label: measure + " reached", size: 70}],
                       plugins: [marks(plateauS, endS)]}, data, box);
    box.uplot = u;
    box.groups = list.map(function (s) { return s.group; });
  }

  /* More instance curves than this are drawn only when asked for: dozens of curves cannot
   * be told apart, and drawing them is most of the page's time (60 curves: about half a
   * second in Chromium, where the rest of the page takes 200 ms). */
  var MAX_SHOWN_INSTANCES = 12;

  function toggles(box, ninst) {
    var el = S.el;
    if (ninst > MAX_SHOWN_INSTANCES) box.dataset.showinstances = "0";
    var p = el("p", {id: "curve-toggles", cls: "filters"});
    [["union", "union"], ["hosts", "per machine"], ["instances", "per instance"]].forEach(function (g) {
      var cb = el("input", {type: "checkbox", id: "show-" + g[0]});
      cb.checked = box.dataset["show" + g[0]] !== "0";
      cb.addEventListener("change", function () {
        box.dataset["show" + g[0]] = cb.checked ? "1" : "0";
        if (box.redraw) box.redraw();
      });
      p.appendChild(el("label", null, [cb, " " + g[1] + (g[0] === "instances" && !cb.checked ?
        " (" + ninst + " curves: off until asked for)" : "")]));
    });
    return p;
  }

  /* ---- the frontier: the document's {part, host, added_ns, unreachable, reachable_not_reached,
   * total, rows} (docs/web.md), that of the campaign's latest part stored with a call graph ---- */

  function frontierPanel(fr) {
    var el = S.el;
    var box = el("div", {id: "frontier"});
    if (fr === null || fr === undefined || !Array.isArray(fr.rows)) {
      box.appendChild(el("p", {id: "frontier-absent", cls: "note",
        text: "No frontier in this campaign: no part was stored with reachability (the map " +
              "has no call graph, or the .ptcov was made before the frontier was recorded)."}));
      return box;
    }
    box.appendChild(el("p", {id: "frontier-summary", text: "Of part " + fr.part + " (" +
      fr.host + ", added " + S.fmtDate(fr.added_ns) + " UTC): " + fmtInt(fr.reachable_not_reached) +
      " never-reached functions reachable from the harness, " + fmtInt(fr.unreachable) +
      " unreachable" + (fr.indirect_calls ? "" : " (direct calls only)") + "; " +
      fmtInt(fr.total) + " frontier entries" + (fr.total > fr.rows.length ? ", the first " +
      fmtInt(fr.rows.length) + " kept" : "") + "."}));
    box.appendChild(el("p", {id: "frontier-note", cls: "note",
      text: "This is one part's frontier, the latest added that has one. The frontier of the " +
            "campaign's union is exact only when its parts were merged with `ptcall cov merge` " +
            "and added as one part: a function one part never reached may be reached by " +
            "another."}));
    var trs = fr.rows.map(function (r) {
      return el("tr", {"data-fn": r.name}, [el("td", {cls: "fn", text: r.name}),
        el("td", {text: r.file ? r.file + (r.line ? ":" + r.line : "") : "-"}),
        el("td", {cls: "callers", text: (r.by_pointer_only ? "(by pointer) " : "") +
                                        r.callers.join(", ")}),
        numCell(r.functions_behind), numCell(r.insns_behind), numCell(r.blocks_behind),
        numCell(r.lines_behind)]);
    });
    box.appendChild(sortable(S.table("frontier-table", ["function", "source",
      "reached callers", "functions behind", "insns behind", "blocks behind", "lines behind"],
      trs)));
    return box;
  }

  /* ---- /campaigns/ID ---------------------------------------------------------------------------- */

  function last(points) { return points && points.length ? points[points.length - 1] : null; }

  function pageOne(id) {
    var el = S.el;
    S.mark("nav-campaigns");
    /* top=N as the API takes it: the reached functions listed (its default, or 0: all) */
    var top = S.query().get("top");
    S.api("/api/v1/campaigns/" + id + (top !== null ? "?top=" + encodeURIComponent(top) : ""))
     .then(function (res) {
      if (res.status !== 200) return S.fail(res);
      /* the document: {campaign: {..., curves, functions, frontier}} */
      var d = res.body, c = d.campaign || d;
      var cv = c.curves || d.curves || {};
      var info = [["program", c.program], ["build", c.build_id || "-"],
                  ["tags", tagsOf(c.tags) || "-"], ["machines", (c.hosts || []).join(" ") || "-"],
                  ["instances", fmtInt(c.instances)], ["inputs", fmtInt(c.inputs)],
                  ["crashes", fmtInt(c.crashes)], ["hangs", fmtInt(c.hangs)],
                  ["functions", ofTotal(c.functions_reached, c.functions_total)],
                  ["blocks", c.blocks_total === null ? "not counted (a build without " +
                   "-fptcall-cov)" : ofTotal(c.blocks_reached, c.blocks_total)],
                  ["campaign time", fmtDur(c.campaign_time_ms)],
                  ["last new coverage", plateauText(c)],
                  ["parts", fmtInt(c.parts)], ["added (UTC)", S.fmtDate(c.added_ns)]];
      var dl = el("dl", {id: "campaign-info"});
      info.forEach(function (kv) {
        dl.appendChild(el("dt", {text: kv[0]}));
        dl.appendChild(el("dd", {"data-key": kv[0], text: kv[1]}));
      });
      var hasBlocks = c.blocks_total !== null && c.blocks_total !== undefined;
      var box = el("div", {id: "campaign-chart", cls: "chart"});
      var measure = el("select", {id: "curve-measure"}, [el("option", {value: "functions",
        text: "functions"})]);
      if (hasBlocks) measure.appendChild(el("option", {value: "blocks", text: "blocks"}));
      box.redraw = function () {
        if (box.uplot) box.uplot.destroy();
        box.uplot = null;
        curves(box, c, cv, measure.value);
      };
      measure.addEventListener("change", box.redraw);
      var tg = toggles(box, (cv.instances || []).length);
      var bar = el("div", {cls: "filters"}, [el("label", null, ["measure ", measure])]);
      /* per-instance inputs, crashes and hangs when the document has them */
      var icounts = (cv.instances || []).some(function (i) { return i.inputs !== undefined; });
      var irows = (cv.instances || []).map(function (i) {
        var p = last(i.points), first = i.points && i.points.length ? i.points[0] : null;
        var lastNew = i.last_new_ms !== undefined ? i.last_new_ms : null;
        /* else the last point at which this instance's functions or blocks grew */
        if (i.last_new_ms === undefined)
          (i.points || []).forEach(function (q, k) {
            var prev = k ? i.points[k - 1] : null;
            if (!prev || q[1] > prev[1] || (q[2] !== null && prev[2] !== null && q[2] > prev[2]))
              lastNew = q[0];
          });
        var opt = function (v) { return v === undefined ? null : v; };
        return el("tr", {"data-instance": i.name}, [
          el("td", {cls: "instance", text: i.name}), el("td", {cls: "host", text: i.host}),
          icounts ? numCell(opt(i.inputs)) : null, icounts ? numCell(opt(i.crashes)) : null,
          icounts ? numCell(opt(i.hangs)) : null,
          numCell(i.functions !== undefined ? i.functions : p ? p[1] : null),
          numCell(i.blocks !== undefined ? i.blocks : p ? p[2] : null),
          numCell(first ? first[0] : null, fmtDur(first ? first[0] : null)),
          numCell(lastNew, fmtDur(lastNew))]);
      });
      var hrows = (cv.hosts || []).map(function (h) {
        var p = last(h.points);
        return el("tr", {"data-host": h.host}, [el("td", {cls: "host", text: h.host}),
          numCell(p ? p[1] : null), numCell(p ? p[2] : null)]);
      });
      var fns = c.functions || d.functions || [];
      var moreFns = c.more_functions || d.more_functions || 0;
      var frontier = c.frontier !== undefined ? c.frontier : d.frontier;
      var frows = fns.map(function (f) {
        var t = f.t_ms !== undefined ? f.t_ms : f.first_ms !== undefined ? f.first_ms :
                f.time_ms;
        var inst = f.instance !== undefined ? f.instance : f.first_instance;
        return el("tr", {"data-fn": f.name}, [el("td", {cls: "fn", text: f.name}),
          el("td", {text: f.file ? f.file + (f.line ? ":" + f.line : "") : "-"}),
          numCell(t === undefined ? null : t, fmtDur(t)),
          el("td", {cls: "instance", text: inst === undefined || inst === null ? "-" :
                                           String(inst) + (f.host ? " @ " + f.host : "")}),
          el("td", {text: f.input !== undefined && f.input !== null ? String(f.input) : "-"})]);
      });
      S.show([el("h1", {id: "campaign-name", text: "Campaign " + c.id + ": " + c.name}), dl,
              el("p", null, [el("a", {href: "/campaigns/compare?a=" + c.id,
                                      text: "compare with other campaigns"})]),
              el("h2", {text: "Coverage over time"}), bar, tg, box,
              el("p", {id: "plateau", cls: "note", text: c.last_new_ms === null ||
                c.last_new_ms === undefined ? "no coverage recorded" :
                "last new coverage at " + fmtDur(c.last_new_ms) + " of " +
                fmtDur(c.campaign_time_ms) + (c.campaign_time_ms > c.last_new_ms ?
                ": nothing new for the last " + fmtDur(c.campaign_time_ms - c.last_new_ms) :
                "")}),
              el("h2", {text: "Instances"}),
              sortable(S.table("campaign-instances", ["instance", "machine"].concat(icounts ?
                ["inputs", "crashes", "hangs"] : []).concat(["functions", "blocks",
                "first coverage", "last new coverage"]), irows)),
              el("h2", {text: "Machines"}),
              sortable(S.table("campaign-hosts", ["machine", "functions", "blocks"], hrows)),
              el("h2", {text: "Frontier"}), frontierPanel(frontier),
              el("h2", {text: "Reached functions (" + fmtInt(fns.length + moreFns) +
                              ", first reached first)"}),
              sortable(S.table("campaign-functions", ["function", "source", "first reached",
                "by instance", "first input"], frows)),
              moreFns ? el("p", {id: "functions-more"}, [fmtInt(moreFns) +
                " more functions not shown: ", el("a", {href: "/campaigns/" + c.id + "?top=0",
                                                        text: "show them all"})]) : null]);
      curves(box, c, cv, "functions");
      drawn();
    });
  }

  /* ---- /campaigns/compare?a=SEL&b=SEL --------------------------------------------------------------- */

  /* pairs of trials (one of A, one of B) where A reached more, fewer, as many functions */
  function pairs(ta, tb) {
    var more = 0, less = 0, same = 0;
    ta.forEach(function (x) {
      tb.forEach(function (y) {
        if (x.functions > y.functions) more++;
        else if (x.functions < y.functions) less++;
        else same++;
      });
    });
    return {more: more, less: less, same: same, n: ta.length * tb.length};
  }

  function fmtP(p) {
    if (p === null || p === undefined) return "-";
    if (p < 0.001) return p.toExponential(1);
    return String(Math.round(p * 1000) / 1000);
  }

  function testName(t) {
    return (t.name || "test") + (t.method ? " (" + t.method + ")" : "");
  }

  /* the sentence a reader takes away: who reached more, how often, and whether it holds */
  function verdict(ga, gb, test) {
    var pr = pairs(ga.trials, gb.trials);
    var hi = ga, lo = gb, k = pr.more;
    if (pr.less > pr.more) { hi = gb; lo = ga; k = pr.less; }
    var s;
    if (pr.more === pr.less)
      s = ga.label + " and " + gb.label + " reached as many functions as often as not (" +
          pr.more + " pairs each way, " + pr.same + " ties, of " + pr.n + " pairs of trials)";
    else
      s = hi.label + " reached more functions than " + lo.label + " in " + k + " of " + pr.n +
          " pairs of trials" + (pr.same ? " (" + pr.same + (pr.same === 1 ? " tie)" : " ties)") : "");
    if (test) {
      s += "; " + (test.name || "test") + ": U = " + S.fmtNum(test.u) +
           ", p = " + fmtP(test.p) + ", A12 = " + (test.a12 === null || test.a12 === undefined ?
           "-" : test.a12.toFixed(2)) + ": " + (test.significant_at_0_05 ?
           "significant at 0.05" : "no significant difference at 0.05");
    }
    return {text: s + ".", pairs: pr};
  }

  /* a box per group: whiskers min to max, box q1 to q3, the median, each trial a dot */
  function boxes(groups, key) {
    var svgEl = S.svgEl;
    var W = 720, RH = 46, L = 180, R = 40;
    var all = [];
    groups.forEach(function (g) {
      if (g[key]) all.push(g[key].min, g[key].max);
      g.trials.forEach(function (t) { if (t[key] !== null && t[key] !== undefined) all.push(t[key]); });
    });
    if (!all.length) return null;
    var lo = Math.min.apply(null, all), hi = Math.max.apply(null, all);
    if (hi === lo) { lo -= 1; hi += 1; }
    var pad = (hi - lo) * 0.05;
    lo -= pad; hi += pad;
    var X = function (v) { return L + (v - lo) / (hi - lo) * (W - L - R); };
    var svg = svgEl("svg", {id: "box-" + key, width: W, height: 30 + RH * groups.length,
                            role: "img", "class": "boxplot"});
    groups.forEach(function (g, i) {
      var y = 10 + i * RH, m = y + RH / 2 - 6, s = g[key];
      var gg = svgEl("g", {"class": "group", "data-group": String(i)});
      gg.appendChild(svgEl("text", {x: 4, y: m + 4}, g.label.length > 24 ?
                                   g.label.slice(0, 23) + "\u2026" : g.label));
      if (s) {
        gg.appendChild(svgEl("line", {x1: X(s.min), x2: X(s.max), y1: m, y2: m, "class": "whisker"}));
        gg.appendChild(svgEl("rect", {x: X(s.q1), y: m - 12, width: Math.max(1, X(s.q3) - X(s.q1)),
                                      height: 24, "class": "iqr"}));
        gg.appendChild(svgEl("line", {x1: X(s.median), x2: X(s.median), y1: m - 12, y2: m + 12,
                                      "class": "median"}));
      }
      g.trials.forEach(function (t) {
        if (t[key] === null || t[key] === undefined) return;
        gg.appendChild(svgEl("circle", {cx: X(t[key]), cy: m, r: 4, "class": "trial",
                                        "data-v": String(t[key])}));
      });
      svg.appendChild(gg);
    });
    var ay = 10 + RH * groups.length;
    svg.appendChild(svgEl("line", {x1: L, x2: W - R, y1: ay, y2: ay, "class": "axis"}));
    [lo + pad, (lo + hi) / 2, hi - pad].forEach(function (v) {
      svg.appendChild(svgEl("text", {x: X(v) - 10, y: ay + 16, "class": "tick"}, fmtInt(Math.round(v))));
    });
    return svg;
  }

  function compareForm(params, cs) {
    var el = S.el;
    var f = el("form", {method: "get", action: "/campaigns/compare", id: "compare-form",
                        cls: "filters"});
    /* the choices offered: every tag K=V two or more campaigns share, and each campaign */
    var dl = el("datalist", {id: "campaign-selectors"});
    var seen = {};
    cs.forEach(function (c) {
      var t = c.tags || {};
      var kv = Array.isArray(t) ? t.map(function (x) {
        return typeof x === "string" ? x : x.name + "=" + x.value;
      }) : Object.keys(t).map(function (k) { return k + "=" + t[k]; });
      kv.forEach(function (s) { seen[s] = (seen[s] || 0) + 1; });
    });
    Object.keys(seen).sort().forEach(function (s) {
      if (seen[s] > 1) dl.appendChild(el("option", {value: "tag:" + s}));
    });
    cs.forEach(function (c) {
      dl.appendChild(el("option", {value: String(c.id), label: c.id + ": " + c.name}));
    });
    f.appendChild(dl);
    ["a", "b"].forEach(function (n) {
      f.appendChild(el("label", null, [n.toUpperCase() + " ", el("input", {name: n,
        list: "campaign-selectors", placeholder: "tag:K=V or 1,2,3", value: params.get(n) || ""})]));
    });
    f.appendChild(el("button", {type: "submit", text: "Compare"}));
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var p = new URLSearchParams();
      p.set("a", f.elements.a.value);
      p.set("b", f.elements.b.value);
      location.href = "/campaigns/compare" + S.qs(p);
    });
    return f;
  }

  function statRow(g, key) {
    var s = g[key];
    var cells = [S.el("td", {cls: "label", text: g.label}), numCell(g.trials.length)];
    ["median", "q1", "q3", "min", "max", "mean", "stddev"].forEach(function (k) {
      cells.push(s ? numCell(s[k], fmtInt(Number.isInteger(s[k]) ? s[k] :
                                           s[k] === null ? null : Math.round(s[k] * 100) / 100))
                   : numCell(null));
    });
    return S.el("tr", {"data-group": g.label, "data-measure": key}, cells);
  }

  function pageCompare() {
    var el = S.el, params = S.query();
    S.mark("nav-campaigns");
    S.api("/api/v1/campaigns").then(function (cl) {
      if (cl.status !== 200) return S.fail(cl);
      var form = compareForm(params, cl.body.campaigns);
      var a = params.get("a"), b = params.get("b");
      if (!a || !b) {
        S.show([el("h1", {text: "Compare campaigns"}), form,
                el("p", {cls: "note", text: "Choose two groups of trials: tag:K=V (the " +
                  "campaigns with that tag) or campaign ids (1,2,3)."})]);
        return;
      }
      var q = new URLSearchParams();
      q.set("a", a);
      q.set("b", b);
      S.api("/api/v1/campaigns/compare" + S.qs(q)).then(function (res) {
        if (res.status !== 200) {
          var msg = res.body && res.body.error ? res.body.error : "HTTP " + res.status;
          return S.show([el("h1", {text: "Compare campaigns"}), form,
                         el("p", {cls: "error", id: "error", "data-status": String(res.status),
                                  text: msg})]);
        }
        var d = res.body, gs = d.groups;
        var v = verdict(gs[0], gs[1], d.test);
        var trows = [];
        gs.forEach(function (g) {
          g.trials.forEach(function (t) {
            trows.push(el("tr", {"data-campaign": String(t.id), "data-group": g.label}, [
              el("td", {cls: "label", text: g.label}),
              el("td", null, [el("a", {href: "/campaigns/" + t.id, text: t.id + ": " + t.name})]),
              numCell(t.functions), numCell(t.blocks)]));
          });
        });
        var hasBlocks = gs.some(function (g) { return !!g.blocks; });
        var heads = ["group", "trials", "median", "q1", "q3", "min", "max", "mean",
                     "stddev (n\u22121)"];
        var chart = el("div", {id: "compare-chart", cls: "chart"});
        var parts = [el("h1", {id: "compare-title", text: gs[0].label + " against " + gs[1].label}),
          form,
          el("p", {id: "verdict", cls: "verdict", "data-more": String(v.pairs.more),
                   "data-less": String(v.pairs.less), "data-pairs": String(v.pairs.n),
                   "data-significant": d.test ? String(!!d.test.significant_at_0_05) : "",
                   text: v.text}),
          el("h2", {text: "Functions reached per trial"}), boxes(gs, "functions"),
          sortable(S.table("compare-functions", heads, gs.map(function (g) {
            return statRow(g, "functions"); })))];
        if (hasBlocks)
          parts.push(el("h2", {text: "Blocks reached per trial"}), boxes(gs, "blocks"),
                     sortable(S.table("compare-blocks", heads, gs.map(function (g) {
                       return statRow(g, "blocks"); }))));
        parts.push(el("h2", {text: "Median functions over time"}), chart,
                   el("h2", {text: "Trials"}),
                   sortable(S.table("compare-trials", ["group", "campaign", "functions",
                                                       "blocks"], trows)));
        if (d.test)
          parts.push(el("p", {id: "test", cls: "note", text: testName(d.test) +
            ": U = " + S.fmtNum(d.test.u) + ", p = " + fmtP(d.test.p) + ", A12 = " +
            (d.test.a12 === null || d.test.a12 === undefined ? "-" : d.test.a12.toFixed(3)) +
            " (the probability that a trial of " + gs[0].label + " reaches more functions " +
            "than one of " + gs[1].label + ", ties counting half)"}));
        if (d.test_blocks && hasBlocks)
          parts.push(el("p", {id: "test-blocks", cls: "note", text: "Blocks: " +
            testName(d.test_blocks) + ": U = " + S.fmtNum(d.test_blocks.u) +
            ", p = " + fmtP(d.test_blocks.p) + ", A12 = " + (d.test_blocks.a12 === null ||
            d.test_blocks.a12 === undefined ? "-" : d.test_blocks.a12.toFixed(3)) + ": " +
            (d.test_blocks.significant_at_0_05 ? "significant at 0.05" :
             "no significant difference at 0.05")}));
        S.show(parts);
        if (typeof uPlot !== "undefined") {
          var data = align(gs.map(function (g) {
            return {points: (g.median_curve || []).map(function (p) { return [p[0], p[1]]; })};
          }), 1);
          var xmax = data[0].length ? data[0][data[0].length - 1] : 1;
          chart.dataset.series = String(gs.length);
          chart.dataset.xMax = String(xmax);
          new uPlot({width: chartWidth(), height: 300,
                     series: [{label: "time"}].concat(gs.map(function (g, i) {
                       return {label: g.label + " (median)", stroke: COLOURS[i % COLOURS.length],
                               width: 2, paths: uPlot.paths.stepped({align: 1}),
                               points: {show: false}};
                     })),
                     scales: {x: {time: false, range: [0, Math.max(xmax, 1)]}},
                     axes: [{label: "campaign time", values: function (u, vs) {
                              return vs.map(function (x) { return fmtDur(x * 1000); }); }},
                            {label: "functions reached", size: 70}]}, data, chart);
        }
        drawn();
      });
    });
  }

  window.ptcallCampaigns = function (path, shared) {
    S = shared;
    var m;
    if (path === "/campaigns" || path === "/campaigns/") return pageList();
    if (path === "/campaigns/compare") return pageCompare();
    if ((m = /^\/campaigns\/(\d+)$/.exec(path))) return pageOne(m[1]);
    return false;
  };
})();
