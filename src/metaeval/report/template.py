"""The HTML report's jinja2 template, stylesheet and script, kept in Python so every install has them.

The page is self-contained: the stylesheet and the script are inlined, figures are inline SVG, and
nothing is fetched from the network. The template is rendered with autoescaping on, so every string
that reaches it (system, metric, dataset names, signatures, the command) is escaped; only the SVG of
the figures, produced by matplotlib (which escapes its own text), is marked safe.
"""

CSS = """
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d9dce1; --bg-alt: #f5f6f8; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif;
       color: var(--fg); background: #fff; }
header.page { background: #0b2a45; color: #fff; padding: 1.4rem 1rem 1.1rem; }
header.page h1 { margin: 0 0 .3rem; font-size: 1.5rem; }
header.page p { margin: 0; color: #cfe0ef; }
main, nav.toc { max-width: 1100px; margin: 0 auto; padding: 0 1rem; }
nav.toc { padding-top: .8rem; padding-bottom: .4rem; border-bottom: 1px solid var(--line); }
nav.toc ol { display: flex; flex-wrap: wrap; gap: .3rem 1.4rem; margin: 0; padding: 0; list-style: none; }
nav.toc a { color: var(--accent); text-decoration: none; }
section.report-section { padding: 1.2rem 0 .6rem; border-bottom: 1px solid var(--line); }
section.report-section h2 { margin: 0 0 .4rem; font-size: 1.3rem; }
p.question { margin: .2rem 0 .6rem; color: var(--muted); font-style: italic; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .4rem 0 .8rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
figure.report-figure { margin: .8rem 0 1.2rem; }
figure.report-figure svg.figure-svg { display: block; max-width: 100%; height: auto; }
figure.report-figure figcaption { color: var(--muted); font-size: .9rem; margin-top: .3rem; }
.table-wrap { overflow-x: auto; margin: .4rem 0 1rem; }
.tables { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 620px), 1fr)); gap: 0 1.5rem; align-items: start; }
.tables > .wide { grid-column: 1 / -1; }
table.data td.sig { font-family: "DejaVu Sans Mono", monospace; font-size: .78rem; overflow-wrap: anywhere; word-break: break-all; }
table.data td:first-child { white-space: nowrap; }
table.data td.list { font-size: .8rem; color: var(--muted); min-width: 18rem; }
table.data { border-collapse: collapse; font-size: .88rem; font-variant-numeric: tabular-nums; }
table.data caption { text-align: left; font-weight: 600; padding: .2rem 0 .4rem; caption-side: top; }
table.data th, table.data td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.data thead th { background: var(--bg-alt); position: sticky; top: 0; text-align: left; }
table.data td.num, table.data th.num { text-align: right; white-space: nowrap; }
table.data td .sub { display: block; color: var(--muted); font-size: .8rem; }
table.data tbody tr:nth-child(even) { background: #fafbfc; }
table.data td.good { color: #00603c; font-weight: 600; }
table.data td.warn { color: #a15c00; }
th button.sort { all: unset; cursor: pointer; font-weight: 600; }
th button.sort::after { content: " \\2195"; color: #9aa0a6; font-weight: 400; }
th[aria-sort="ascending"] button.sort::after { content: " \\2191"; color: var(--fg); }
th[aria-sort="descending"] button.sort::after { content: " \\2193"; color: var(--fg); }
th button.sort:focus-visible { outline: 2px solid var(--accent); }
details { margin: .4rem 0 1rem; }
details summary { cursor: pointer; color: var(--accent); }
pre.command, code.signature { background: var(--bg-alt); border: 1px solid var(--line); border-radius: 4px; }
pre.command { padding: .6rem .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
code.signature { display: block; padding: .3rem .5rem; font-size: .8rem; overflow-wrap: anywhere; }
ul.notes { color: var(--muted); font-size: .92rem; }
.omitted { color: var(--muted); }
footer.page { max-width: 1100px; margin: 0 auto; padding: 1rem; color: var(--muted); font-size: .85rem; }
@media print { nav.toc { display: none; } section.report-section { break-inside: avoid-page; } }
"""

SCRIPT = """
(function () {
  "use strict";
  function sortKey(cell) {
    var raw = cell.getAttribute("data-value");
    if (raw === null) { raw = cell.textContent.trim(); }
    if (raw === "" || raw === "n/a") { return null; }
    var num = Number(raw);
    return isNaN(num) ? raw.toLowerCase() : num;
  }
  function compare(a, b) {
    if (a === null || b === null) { return (a === null) - (b === null); }
    if (typeof a === typeof b) { return a < b ? -1 : a > b ? 1 : 0; }
    return typeof a === "number" ? -1 : 1;
  }
  function sortBy(table, column, header) {
    var body = table.tBodies[0];
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = sortKey(r1.cells[column]), b = sortKey(r2.cells[column]);
      if (a === null || b === null) { return compare(a, b); }
      return ascending ? compare(a, b) : compare(b, a);
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      var button = th.querySelector("button.sort");
      if (button) { button.addEventListener("click", function () { sortBy(table, column, th); }); }
    });
  });
  if (window.location.hash === "#selftest") {
    var table = document.querySelector("table.sortable");
    var header = table.tHead.rows[0].cells[1];
    header.querySelector("button.sort").click();
    header.querySelector("button.sort").click();
    var first = table.tBodies[0].rows[0].cells[1];
    document.documentElement.setAttribute("data-selftest", header.getAttribute("aria-sort") + ":" + sortKey(first));
  }
  document.documentElement.setAttribute("data-ready", "yes");
})();
"""

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="metaeval {{ version }}">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<header class="page">
  <h1>{{ title }}</h1>
  <p>{{ subtitle }}</p>
</header>
<nav class="toc" aria-label="Sections">
  <ol>
  {%- for section in sections %}
    <li><a href="#{{ section.key }}">{{ section.title }}</a></li>
  {%- endfor %}
  </ol>
</nav>
<main>
{%- for section in sections %}
<section class="report-section" id="{{ section.key }}" data-section="{{ section.key }}">
  <h2>{{ section.title }}</h2>
  {%- if section.question %}<p class="question">{{ section.question }}</p>{% endif %}
  {%- for paragraph in section.paragraphs %}
  <p>{{ paragraph }}</p>
  {%- endfor %}
  {%- if section.facts %}
  <dl class="facts">
    {%- for name, value in section.facts %}
    <dt>{{ name }}</dt><dd>{{ value }}</dd>
    {%- endfor %}
  </dl>
  {%- endif %}
  {%- if section.command %}
  <pre class="command"><code>{{ section.command }}</code></pre>
  {%- endif %}
  {%- for figure in section.figures %}
  <figure class="report-figure" data-figure="{{ figure.key }}">
    {{ figure.svg }}
    <figcaption>{{ figure.caption }}</figcaption>
  </figure>
  {%- endfor %}
  {%- if section.tables %}<div class="tables">{% endif %}
  {%- for table in section.tables %}
  {%- if table.collapsed %}<details{% if table.wide %} class="wide"{% endif %}><summary>{{ table.caption }}</summary>{% endif %}
  <div class="table-wrap{% if table.wide and not table.collapsed %} wide{% endif %}">
  <table class="data{% if table.sortable %} sortable{% endif %}" data-table="{{ table.key }}">
    <caption>{{ table.caption }}</caption>
    <thead><tr>
    {%- for name in table.header %}
      <th scope="col"{% if table.numeric[loop.index0] %} class="num"{% endif %}>
        {%- if table.sortable %}<button type="button" class="sort">{{ name }}</button>{% else %}{{ name }}{% endif -%}
      </th>
    {%- endfor %}
    </tr></thead>
    <tbody>
    {%- for row in table.rows %}
    <tr>
      {%- for cell in row %}
      <td{% if table.numeric[loop.index0] or cell.css %} class="{% if table.numeric[loop.index0] %}num {% endif %}{{ cell.css }}"{% endif %}
        {%- if cell.value is not none %} data-value="{{ cell.value }}"{% endif %}>{{ cell.text }}
        {%- if cell.sub %}<span class="sub">{{ cell.sub }}</span>{% endif %}</td>
      {%- endfor %}
    </tr>
    {%- endfor %}
    </tbody>
  </table>
  </div>
  {%- if table.collapsed %}</details>{% endif %}
  {%- endfor %}
  {%- if section.tables %}</div>{% endif %}
  {%- if section.notes %}
  <ul class="notes">
    {%- for note in section.notes %}
    <li>{{ note }}</li>
    {%- endfor %}
  </ul>
  {%- endif %}
  {%- for name, signature in section.signatures %}
  <p class="signature-label">Signature of {{ name }}:</p>
  <code class="signature">{{ signature }}</code>
  {%- endfor %}
</section>
{%- endfor %}
</main>
<footer class="page">
  Generated by metaeval {{ version }}. Self-contained page: no network access needed.
  {%- if beside %}
  The same numbers are in {{ beside }} beside this file.
  {%- else %}
  No other file is written beside this page.
  {%- endif %}
</footer>
<script>{{ script }}</script>
</body>
</html>
"""
