/* The script of ptcall's SVG flame graph (outputs/svg.c writes it inline, in CDATA, unless
 * export --svg-static), for the file opened on its own in a browser: click a frame to zoom
 * to it (it fills the width, its callers stay, faded, the rest hides; "Reset zoom"), search
 * ("Search" or Ctrl-F: a regular expression, or a substring when it is not one) highlights
 * the matching frames and says which share of the root's weight they hold, and hovering a
 * frame shows its name, weight and share below the graph. Function names are read only
 * through getAttribute/textContent and written only through textContent/setAttribute, so a
 * name stays text whatever it holds. It must not contain the CDATA end (outputs/svg_embed.cmake
 * refuses it). */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var HIGHLIGHT = "rgb(230,0,230)";
  var EPS = 0.01; /* positions are written with 3 decimals */
  var svg = document.documentElement;
  var frames = [], byG = new Map(), root = null;
  var reset = document.getElementById("ptc-reset");
  var search = document.getElementById("ptc-search");
  var matched = document.getElementById("ptc-matched");
  var details = document.getElementById("ptc-details");
  var term = null;

  Array.prototype.forEach.call(svg.querySelectorAll("g.frame"), function (g) {
    var rect = g.querySelector("rect"), title = g.querySelector("title");
    var text = g.querySelector("text");
    if (!rect) return;
    var f = {g: g, rect: rect, text: text, name: g.getAttribute("data-name") || "",
             weight: Number(g.getAttribute("data-weight")) || 0,
             depth: Number(g.getAttribute("data-depth")) || 0,
             x: Number(rect.getAttribute("x")), w: Number(rect.getAttribute("width")),
             y: Number(rect.getAttribute("y")), h: Number(rect.getAttribute("height")),
             fill: rect.getAttribute("fill"), label: text ? text.textContent : null,
             labelX: text ? text.getAttribute("x") : null,
             title: title ? title.textContent : ""};
    frames.push(f);
    byG.set(g, f);
    if (!root || f.depth < root.depth) root = f;
  });
  if (!root) return;

  /* the name as flamegraph labels show it: cut to what fits at 7 px a character */
  function label(name, width) {
    var fit = width > 14 ? Math.floor((width - 6) / 7) : 0;
    if (fit < 3) return "";
    return name.length <= fit ? name : name.slice(0, fit - 2) + "..";
  }

  function place(f, x, w) {
    f.rect.setAttribute("x", x.toFixed(3));
    f.rect.setAttribute("width", w.toFixed(3));
    var l = label(f.name, w);
    if (!f.text && l) {
      f.text = document.createElementNS(NS, "text");
      f.text.setAttribute("y", (f.y + f.h - 4).toFixed(1));
      f.g.appendChild(f.text);
    }
    if (f.text) {
      f.text.setAttribute("x", (x + 3).toFixed(3));
      f.text.textContent = l;
    }
  }

  function show(el, on) {
    if (on) el.removeAttribute("display");
    else el.setAttribute("display", "none");
  }

  function zoom(z) {
    frames.forEach(function (f) {
      var inside = f.depth >= z.depth && f.x >= z.x - EPS && f.x + f.w <= z.x + z.w + EPS;
      var above = f.depth < z.depth && f.x <= z.x + EPS && f.x + f.w >= z.x + z.w - EPS;
      if (inside) {
        place(f, root.x + (f.x - z.x) * root.w / z.w, f.w * root.w / z.w);
        f.g.removeAttribute("opacity");
      } else if (above) {
        place(f, root.x, root.w);
        f.g.setAttribute("opacity", "0.5");
      }
      show(f.g, inside || above);
    });
    svg.setAttribute("data-zoomed", z.name);
    if (reset) show(reset, z !== root);
  }

  function unzoom() {
    frames.forEach(function (f) {
      f.rect.setAttribute("x", f.x.toFixed(3));
      f.rect.setAttribute("width", f.w.toFixed(3));
      if (f.text) {
        if (f.label === null) {
          f.g.removeChild(f.text);
          f.text = null;
        } else {
          f.text.setAttribute("x", f.labelX);
          f.text.textContent = f.label;
        }
      }
      f.g.removeAttribute("opacity");
      show(f.g, true);
    });
    svg.removeAttribute("data-zoomed");
    if (reset) show(reset, false);
  }

  /* a regular expression, or the text itself when it is not one */
  function matcher(t) {
    try {
      return new RegExp(t);
    } catch (e) {
      return new RegExp(t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    }
  }

  function clearSearch() {
    term = null;
    frames.forEach(function (f) { f.rect.setAttribute("fill", f.fill); });
    if (matched) {
      matched.textContent = "";
      matched.removeAttribute("data-weight");
    }
    if (search) search.textContent = "Search";
    svg.removeAttribute("data-search");
  }

  function runSearch(t) {
    if (!t) {
      clearSearch();
      return;
    }
    var re = matcher(t), hits = [];
    frames.forEach(function (f) {
      var hit = re.test(f.name);
      f.rect.setAttribute("fill", hit ? HIGHLIGHT : f.fill);
      if (hit) hits.push(f);
    });
    /* frames nest (a callee lies within its caller's span): a match inside a counted match
     * is counted already */
    hits.sort(function (a, b) { return a.x - b.x || b.w - a.w; });
    var sum = 0, end = -Infinity;
    hits.forEach(function (f) {
      if (f.x + f.w <= end + EPS) return;
      sum += f.weight;
      end = f.x + f.w;
    });
    term = t;
    svg.setAttribute("data-search", t);
    if (search) search.textContent = "Clear search";
    if (matched) {
      matched.setAttribute("data-weight", String(sum));
      matched.textContent = "Matched: " +
        (root.weight ? 100 * sum / root.weight : 0).toFixed(2) + " % (" + hits.length +
        " frame" + (hits.length === 1 ? "" : "s") + ")";
    }
  }

  function askSearch() {
    var t = window.prompt("Search frames: a regular expression (or a substring when it is not " +
                          "one)", term || "");
    if (t !== null) runSearch(t);
  }

  svg.addEventListener("click", function (e) {
    var t = e.target;
    if (reset && reset.contains(t)) {
      unzoom();
      return;
    }
    if (search && search.contains(t)) {
      if (term !== null) clearSearch();
      else askSearch();
      return;
    }
    var g = t.closest ? t.closest("g.frame") : null;
    if (g && byG.has(g)) zoom(byG.get(g));
  });
  svg.addEventListener("mouseover", function (e) {
    var g = e.target.closest ? e.target.closest("g.frame") : null;
    if (g && byG.has(g) && details) details.textContent = byG.get(g).title;
  });
  svg.addEventListener("mouseout", function (e) {
    var g = e.target.closest ? e.target.closest("g.frame") : null;
    if (g && details) details.textContent = "";
  });
  document.addEventListener("keydown", function (e) {
    if ((e.key === "f" && (e.ctrlKey || e.metaKey)) || e.key === "F3") {
      e.preventDefault();
      askSearch();
    } else if (e.key === "Escape" && term !== null) {
      clearSearch();
    }
  });
  /* for scripts driving the file (the browser test): the same actions as the controls */
  window.ptcallSvg = {search: runSearch, clearSearch: clearSearch, reset: unzoom,
                      zoom: function (g) { if (byG.has(g)) zoom(byG.get(g)); }};
})();
