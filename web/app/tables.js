/* ptcall's tables and figures, shared by every page (docs/web.md, Tables): loaded first, by
 * `ptcall serve`'s pages and inlined into `ptcall html`'s file; app.js and campaign.js take
 * these from window.ptcallTables, so there is one copy of each. Nothing here parses markup:
 * names are compared and shown as text. */
"use strict";

(function () {
  /* integers with thousands separators (4,555,433), other figures with two decimals */
  function fmtInt(v) {
    if (v === null || v === undefined) return "-";
    if (!Number.isInteger(v))
      return v.toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2});
    return v.toLocaleString("en-US");
  }

  function fixed(v, d) {
    return v.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
  }

  /* a time in ns in the unit that suits this figure (ns, µs, ms, s), with separators; a
   * time in another unit (ticks of a backend without a clock) with its unit's name */
  function fmtTime(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit !== "ns") return fmtInt(v) + (unit ? " " + unit : "");
    var a = Math.abs(v);
    if (a >= 1e9) return fixed(v / 1e9, 3) + " s";
    if (a >= 1e6) return fixed(v / 1e6, 3) + " ms";
    if (a >= 1e3) return fixed(v / 1e3, 3) + " \u00b5s";
    return fmtInt(Number.isInteger(v) ? v : Math.round(v * 100) / 100) + " ns";
  }

  /* a change in percent of its base, signed (+12.5 %, -3.0 %); null when the base is 0 */
  function pct(base, change) {
    if (base === null || base === undefined || change === null || change === undefined ||
        base === 0)
      return null;
    return 100 * change / base;
  }

  function fmtPct(p) {
    if (p === null || p === undefined) return "-";
    return (p > 0 ? "+" : "") + fixed(p, 1) + " %";
  }

  /* what a cell sorts by: its exact figure (data-v), else its text */
  function cellKey(td) {
    if (!td) return null;
    if (td.hasAttribute("data-v")) {
      var v = td.getAttribute("data-v");
      return v === "" ? null : Number(v);
    }
    return td.textContent;
  }

  /* Clicking a column's head sorts the rows by it (numbers by their exact figure, data-v;
   * text by the text), a second click the other way; aria-sort says which. */
  function sortBy(t, col, dir) {
    var heads = t.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
    heads[col].setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    var body = t.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var a = cellKey(x.cells[col]), b = cellKey(y.cells[col]);
      if (a === b) return 0;
      if (a === null) return 1; /* no figure: last either way */
      if (b === null) return -1;
      if (typeof a === "number" && typeof b === "number") return dir * (a - b);
      return dir * String(a).localeCompare(String(b));
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function sortable(t) {
    var heads = t.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      th.title = "sort by " + th.textContent;
      var go = function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        sortBy(t, col, dir);
      };
      th.addEventListener("click", go);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") go(); });
    });
    return t;
  }

  /* A box that hides the rows whose column col does not hold what is typed (case ignored,
   * the name compared as text). The count of rows shown is said beside it. */
  function filterBox(t, col, what) {
    var input = document.createElement("input");
    input.type = "search";
    input.className = "row-filter";
    input.id = t.id + "-filter";
    input.placeholder = "filter by " + (what || "name");
    input.setAttribute("aria-label", "filter " + t.id + " by " + (what || "name"));
    var count = document.createElement("span");
    count.className = "row-count";
    var body = t.tBodies[0];
    var apply = function () {
      var q = input.value.toLowerCase(), shown = 0;
      Array.prototype.forEach.call(body.rows, function (r) {
        var c = col < 0 ? r : r.cells[col]; /* -1: the whole row */
        var hit = !q || (c && c.textContent.toLowerCase().indexOf(q) >= 0);
        r.hidden = !hit;
        if (hit) shown++;
      });
      count.textContent = q ? shown + " of " + body.rows.length + " rows" : "";
    };
    input.addEventListener("input", apply);
    var box = document.createElement("div");
    box.className = "table-tools";
    box.appendChild(input);
    box.appendChild(count);
    return box;
  }

  /* a table made sortable, with a filter box on its name column above it */
  function tableWithFilter(t, col, what) {
    sortable(t);
    var wrap = document.createElement("div");
    wrap.className = "table-wrap";
    wrap.appendChild(filterBox(t, col, what));
    wrap.appendChild(t);
    return wrap;
  }

  window.ptcallTables = {fmtInt: fmtInt, fmtTime: fmtTime, pct: pct, fmtPct: fmtPct,
                         cellKey: cellKey, sortable: sortable, sortBy: sortBy,
                         filterBox: filterBox, tableWithFilter: tableWithFilter};
})();
