/* The listing's facets, in the browser: fills <section id="facets"> with one group of checkboxes a facet,
   each value with its count under the current filter, and lists the cases the filter keeps in place of
   the page's static list, with the count, range and summing-up lines rewritten in the page's language
   (<main data-lang>).
   Without a filter in the URL it reads only api/v1/facet-counts.json (each value's count and labels, as
   small at 10,000 cases as at 100); api/v1/facets.json (every case's facet values) is fetched when a
   filter is chosen, or at once when the URL holds one (or when facet-counts.json is missing).
   The filter lives in the URL query: ?component=nccl&year=2022. Values of one facet are ORed, facets ANDed.
   Without a filter the page stays as written (its static list, its pages). No request leaves the site. */
(function () {
  "use strict";
  // BEGIN WORDS: pipeline.site.search.facet_words() (from labels.py); tests/test_site_search.py keeps it equal.
  var WORDS = {"en": {"clear_filters": "Clear filters", "count": "{n} cases", "count_one": "{n} case", "filters": "Filters", "range": "{first}–{last} of {n}", "summing_up": "Components most frequent in these {n} cases: {terms}", "summing_up_none": "These {n} cases name no component.", "summing_up_one": "Components most frequent in this case: {terms}", "summing_up_tie": "No component stands out in these {n} cases: {tied} appear in {times} cases each.", "summing_up_tie_once": "No component stands out in these {n} cases: {tied} appear in one case each.", "summing_up_tie_one": "No component stands out in this case: it names {tied}.", "titles": {"component": "Components", "contributing": "Contributing factors", "domain": "Domain", "org": "Organisation", "root_cause": "Root cause", "severity": "Severity", "symptom": "Symptom classes", "year": "Year"}}, "ko": {"clear_filters": "거르기 지우기", "count": "사례 {n}건", "count_one": "사례 {n}건", "filters": "거르기", "range": "{n}건 중 {first}~{last}번째", "summing_up": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}", "summing_up_none": "이 {n}건에는 구성 요소가 없습니다.", "summing_up_one": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}", "summing_up_tie": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "summing_up_tie_once": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "summing_up_tie_one": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "titles": {"component": "구성 요소", "contributing": "기여 요인", "domain": "분야", "org": "조직", "root_cause": "원인", "severity": "심각도", "symptom": "증상 분류", "year": "연도"}}};
  // END WORDS
  var TOP_COMPONENTS = 3; // the summing-up line names the components standing above the rest, at most this many
  var SHOWN = 500; // cases listed at most, the range line saying which

  var script = document.currentScript;
  var root = new URL("../", script ? script.src : document.baseURI);

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : all;
    });
  }

  function valuesOf(item, facet) {
    var v = item[facet];
    if (v === null || v === undefined || v === "") return [];
    return Array.isArray(v) ? v.map(String) : [String(v)];
  }

  function readFilter(facets) {
    var params = new URLSearchParams(window.location.search);
    var filter = {};
    facets.forEach(function (facet) {
      var chosen = [];
      params.getAll(facet).forEach(function (v) {
        v.split(",").forEach(function (one) {
          if (one && chosen.indexOf(one) < 0) chosen.push(one);
        });
      });
      if (chosen.length) filter[facet] = chosen;
    });
    return filter;
  }

  function writeFilter(facets, filter) {
    var params = new URLSearchParams(window.location.search);
    facets.forEach(function (facet) {
      params.delete(facet);
      (filter[facet] || []).forEach(function (v) { params.append(facet, v); });
    });
    var query = params.toString();
    history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
  }

  function matches(item, filter, except) {
    for (var facet in filter) {
      if (facet === except) continue;
      var have = valuesOf(item, facet);
      if (!filter[facet].some(function (v) { return have.indexOf(v) >= 0; })) return false;
    }
    return true;
  }

  function labelOf(data, lang, facet, value) {
    var labels = (data.labels && data.labels[lang] && data.labels[lang][facet]) || {};
    return labels[value] || value;
  }

  function textIn(texts, lang) {
    if (!texts) return { text: "", lang: lang };
    if (typeof texts === "string") return { text: texts, lang: lang };
    if (texts[lang]) return { text: texts[lang], lang: lang };
    for (var other in texts) if (texts[other]) return { text: texts[other], lang: other };
    return { text: "", lang: lang };
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var name in attrs || {}) {
      if (name === "text") node.textContent = attrs[name];
      else node.setAttribute(name, attrs[name]);
    }
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }

  function counts(data, facet, filter) {
    var found = {};
    if (!data.cases) {
      // facet-counts.json: the counts without a filter, as they are
      var given = (data.counts && data.counts[facet]) || {};
      for (var value in given) found[value] = given[value];
      return found;
    }
    data.cases.forEach(function (item) {
      if (!matches(item, filter, facet)) return;
      valuesOf(item, facet).forEach(function (v) { found[v] = (found[v] || 0) + 1; });
    });
    return found;
  }

  function facetGroup(data, lang, facet, filter) {
    var found = counts(data, facet, filter);
    var chosen = filter[facet] || [];
    chosen.forEach(function (v) { if (!(v in found)) found[v] = 0; });
    var values = Object.keys(found).sort(function (a, b) {
      if (facet === "year") return b.localeCompare(a);
      return found[b] - found[a] || labelOf(data, lang, facet, a).localeCompare(labelOf(data, lang, facet, b));
    });
    if (!values.length) return null;
    var title = (WORDS[lang].titles[facet]) || facet;
    var list = el("ul", { class: "facet-values" });
    values.forEach(function (v) {
      var id = "facet-" + facet + "-" + v.replace(/[^A-Za-z0-9_-]/g, function (c) { return "_" + c.charCodeAt(0); });
      var box = el("input", { type: "checkbox", id: id, name: facet, value: v });
      box.checked = chosen.indexOf(v) >= 0;
      var label = el("label", { for: id }, [
        document.createTextNode(labelOf(data, lang, facet, v) + " "),
        el("span", { class: "facet-count", text: "(" + found[v] + ")" })
      ]);
      list.appendChild(el("li", {}, [box, label]));
    });
    return el("fieldset", { class: "facet", "data-facet": facet }, [el("legend", { text: title }), list]);
  }

  // The components that stand above the rest: the first k by count (then by name), k at most TOP_COMPONENTS
  // and as large as it can be while the k-th is more frequent than the next; when even the first ties beyond
  // TOP_COMPONENTS, the tie (how many, in how many cases), never some of the tied picked by name. As the
  // static pages count (pages.standing).
  function standing(found) {
    var names = Object.keys(found).sort(function (a, b) {
      return found[b] - found[a] || (a < b ? -1 : a > b ? 1 : 0);
    });
    for (var k = Math.min(TOP_COMPONENTS, names.length); k > 0; k--) {
      if (k === names.length || found[names[k - 1]] > found[names[k]]) return { named: names.slice(0, k) };
    }
    if (!names.length) return { named: [] };
    var times = found[names[0]];
    return { named: [], tied: names.filter(function (v) { return found[v] === times; }).length, times: times };
  }

  function summingUp(data, lang, kept) {
    var found = {};
    kept.forEach(function (item) {
      valuesOf(item, "component").forEach(function (v) { found[v] = (found[v] || 0) + 1; });
    });
    var top = standing(found);
    var words = WORDS[lang];
    var n = kept.length;
    if (top.named.length) {
      var terms = top.named.map(function (v) { return labelOf(data, lang, "component", v); }).join(", ");
      return fill(n === 1 ? words.summing_up_one : words.summing_up, { n: n, terms: terms });
    }
    if (top.tied) {
      var tie = n === 1 ? words.summing_up_tie_one : top.times === 1 ? words.summing_up_tie_once : words.summing_up_tie;
      return fill(tie, { n: n, tied: top.tied, times: top.times });
    }
    return fill(words.summing_up_none, { n: n });
  }

  function caseItem(data, lang, item) {
    var title = textIn(item.title, lang);
    var href = new URL(lang + "/cases/" + encodeURIComponent(item.id) + "/", root).href;
    var heading = el("span", { class: "case-title", text: title.text });
    if (title.lang !== lang) heading.setAttribute("lang", title.lang);
    return el("li", { class: "case", id: item.id }, [
      el("a", { href: href, class: "case-id", text: item.id }), document.createTextNode(" "),
      heading, document.createTextNode(" "),
      el("span", { class: "case-org", text: item.org || "" }), document.createTextNode(" "),
      el("span", { class: "case-year", text: item.year === undefined || item.year === null ? "" : String(item.year) })
    ]);
  }

  function fetchJson(name) {
    return fetch(new URL("api/v1/" + name, root).href, { credentials: "same-origin" }).then(function (answer) {
      if (!answer.ok) throw new Error(name + ": " + answer.status);
      return answer.json();
    });
  }

  function warn(error) {
    if (window.console) console.warn("facets unavailable:", error);
  }

  function start(data) {
    var main = document.querySelector("main[data-lang]");
    var section = document.getElementById("facets");
    var list = document.querySelector("ol.cases");
    if (!main || !section || !list) return;
    var lang = WORDS[main.getAttribute("data-lang")] ? main.getAttribute("data-lang") : "en";
    var words = WORDS[lang];
    var facets = data.facets || Object.keys(words.titles);
    var kept = {
      list: list.innerHTML,
      lines: Array.prototype.map.call(document.querySelectorAll(".summing-up, .count, .range"), function (n) {
        return [n, n.textContent];
      })
    };
    var filter = readFilter(facets);
    var fetching = null;

    // The cases' values (facets.json), fetched once, the first time a filter needs them.
    function withCases(then) {
      if (data.cases) return then();
      if (!fetching) {
        fetching = fetchJson("facets.json").then(function (full) {
          data = full;
        });
      }
      fetching.then(then).catch(function (error) {
        fetching = null;
        warn(error);
      });
    }

    function render(focusId) {
      var active = Object.keys(filter).length > 0;
      var groups = el("div", { class: "facet-groups" });
      facets.forEach(function (facet) {
        var group = facetGroup(data, lang, facet, filter);
        if (group) groups.appendChild(group);
      });
      var clear = el("button", { type: "button", class: "facets-clear", text: words.clear_filters });
      if (!active) clear.disabled = true;
      section.replaceChildren(el("h2", { id: "facets-title", text: words.filters }), clear, groups);
      section.setAttribute("aria-labelledby", "facets-title");
      section.hidden = false;
      document.documentElement.classList.toggle("filtered", active);
      if (!active) {
        list.innerHTML = kept.list;
        kept.lines.forEach(function (pair) { pair[0].textContent = pair[1]; });
      } else {
        var shown = data.cases.filter(function (item) { return matches(item, filter, null); });
        list.replaceChildren.apply(list, shown.slice(0, SHOWN).map(function (item) { return caseItem(data, lang, item); }));
        var n = shown.length;
        document.querySelectorAll(".count").forEach(function (node) {
          node.textContent = fill(n === 1 ? words.count_one : words.count, { n: n });
        });
        document.querySelectorAll(".range").forEach(function (node) {
          node.textContent = fill(words.range, { n: n, first: n ? 1 : 0, last: Math.min(n, SHOWN) });
        });
        document.querySelectorAll(".summing-up").forEach(function (node) { node.textContent = summingUp(data, lang, shown); });
      }
      if (focusId) {
        var again = document.getElementById(focusId);
        if (again) again.focus();
      }
    }

    section.addEventListener("change", function (event) {
      var box = event.target;
      if (!box || box.type !== "checkbox") return;
      var chosen = (filter[box.name] || []).filter(function (v) { return v !== box.value; });
      if (box.checked) chosen.push(box.value);
      if (chosen.length) filter[box.name] = chosen;
      else delete filter[box.name];
      writeFilter(facets, filter);
      withCases(function () { render(box.id); });
    });
    section.addEventListener("click", function (event) {
      if (!event.target.classList || !event.target.classList.contains("facets-clear")) return;
      filter = {};
      writeFilter(facets, filter);
      render(null);
      var first = section.querySelector("input[type=checkbox]");
      if (first) first.focus();
    });
    window.addEventListener("popstate", function () {
      filter = readFilter(facets);
      if (Object.keys(filter).length) withCases(function () { render(null); });
      else render(null);
    });
    render(null);
  }

  function load() {
    var facets = Object.keys(WORDS.en.titles);
    var filtered = Object.keys(readFilter(facets)).length > 0;
    var first = filtered
      ? fetchJson("facets.json")
      : fetchJson("facet-counts.json").catch(function () { return fetchJson("facets.json"); });
    first.then(start).catch(warn);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", load);
  else load();
})();
