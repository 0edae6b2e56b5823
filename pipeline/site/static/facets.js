/* The listing's facets, in the browser: fills <section id="facets"> with one group of checkboxes a facet,
   each value with its count under the current filter, and lists the cases the filter keeps in place of
   the page's static list, with the count, range and summing-up lines rewritten in the page's language
   (<main data-lang>).
   Without a filter in the URL it reads only api/v1/facet-counts.json (each value's count and labels, as
   small at 10,000 cases as at 100); api/v1/facets.json (every case's facet values) is fetched when a
   filter is chosen, or at once when the URL holds one (or when facet-counts.json is missing).
   The filter lives in the URL query: ?component=nccl&year=2022. Values of one facet are ORed, facets ANDed.
   The filtered cases are listed as the static listing lists them, each a full card (its title linking
   to its page, its org and year, its sections from api/v1/cases/{id}.json), twenty at a time, its texts'
   Markdown rendered as the static cards' (assets/markdown.json, from pipeline/render.py).
   A term's own page (ko/components/nccl/) starts with its term ticked and the counts of its cases.
   Without a filter the page stays as written (its static list, its pages). No request leaves the site. */
(function () {
  "use strict";
  // BEGIN WORDS: pipeline.site.search.facet_words() (from labels.py); tests/test_site_search.py keeps it equal.
  var WORDS = {"en": {"clear_filters": "Clear filters", "count": "{n} cases", "count_one": "{n} case", "filters": "Filters", "machine_translated": "Machine-translated", "more_cases": "More cases", "not_translated": "Not yet translated", "range": "{first}–{last} of {n}", "read_in_english": "English original", "sections": [["symptoms_text", "Symptoms"], ["trigger", "Trigger"], ["root_cause", "Root cause"], ["components", "Components"], ["contributing", "Contributing factors"], ["detection", "Detection"], ["remediation", "Remediation"], ["action_items", "Action items"], ["lessons", "Lessons"]], "summing_up": "Components most frequent in these {n} cases: {terms}", "summing_up_none": "These {n} cases name no component.", "summing_up_one": "Components most frequent in this case: {terms}", "summing_up_tie": "No component stands out in these {n} cases: {tied} appear in {times} cases each.", "summing_up_tie_once": "No component stands out in these {n} cases: {tied} appear in one case each.", "summing_up_tie_one": "No component stands out in this case: it names {tied}.", "titles": {"component": "Components", "contributing": "Contributing factors", "domain": "Domain", "org": "Organisation", "root_cause": "Root cause", "severity": "Severity", "symptom": "Symptom classes", "year": "Year"}}, "ko": {"clear_filters": "거르기 지우기", "count": "사례 {n}건", "count_one": "사례 {n}건", "filters": "거르기", "machine_translated": "기계 번역", "more_cases": "사례 더 보기", "not_translated": "아직 번역되지 않음", "range": "{n}건 중 {first}~{last}번째", "read_in_english": "영어 원문", "sections": [["symptoms_text", "증상"], ["trigger", "촉발"], ["root_cause", "원인"], ["components", "구성 요소"], ["contributing", "기여 요인"], ["detection", "감지"], ["remediation", "조치"], ["action_items", "후속 조치"], ["lessons", "교훈"]], "summing_up": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}", "summing_up_none": "이 {n}건에는 구성 요소가 없습니다.", "summing_up_one": "이 {n}건에서 가장 많이 나오는 구성 요소: {terms}", "summing_up_tie": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "summing_up_tie_once": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "summing_up_tie_one": "이 {n}건에서 두드러지는 구성 요소는 없습니다: {tied}개가 각각 {times}건에 나옵니다.", "titles": {"component": "구성 요소", "contributing": "기여 요인", "domain": "분야", "org": "조직", "root_cause": "원인", "severity": "심각도", "symptom": "증상 분류", "year": "연도"}}};
  // END WORDS
  var TOP_COMPONENTS = 3; // the summing-up line names the components standing above the rest, at most this many
  var SHOWN = 20; // cards listed at a time, as a page of the static listing; "more cases" shows the next

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

  // Whether a case is kept by the filter (but the facet `except`, whose own values are alternatives) and
  // carries the page's own term (a term's page: its cases only, whatever else is ticked).
  function matches(item, filter, except, term) {
    if (term && valuesOf(item, term.facet).indexOf(term.value) < 0) return false;
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

  function counts(data, facet, filter, term) {
    var found = {};
    if (!data.cases) {
      // facet-counts.json: the counts without a filter, as they are
      var given = (data.counts && data.counts[facet]) || {};
      for (var value in given) found[value] = given[value];
      return found;
    }
    data.cases.forEach(function (item) {
      if (!matches(item, filter, facet, term)) return;
      valuesOf(item, facet).forEach(function (v) { found[v] = (found[v] || 0) + 1; });
    });
    return found;
  }

  function facetGroup(data, lang, facet, filter, term) {
    var found = counts(data, facet, filter, term);
    var chosen = (filter[facet] || []).concat(term && term.facet === facet ? [term.value] : []);
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

  // A case's card as the static listing writes it (pages.py, `_item_html`): its id and title linking to its
  // page, its org and year, then its sections (WORDS.sections, the listing's order) from its record
  // (api/v1/cases/{id}.json), fetched for the cards shown: a text missing in the page's language is the
  // other's, marked; the vocabulary's sections keep their heading when empty, as on the static pages.
  var SECTION_FACETS = { components: "component", contributing: "contributing", root_cause: "root_cause" };
  var FOLDERS = { component: "components", contributing: "contributing", root_cause: "root-causes" };

  // The texts' Markdown subset, rendered as the static pages render it (pipeline/render.py): markdown-it's
  // own script (assets/vendor/markdown-it.min.js, loaded with the first card built) set up from
  // assets/markdown.json, which the build writes from render.py: the rules, the schemes linked and the
  // links' rel live there only. Without them (a script that failed to load), the texts are shown plain.
  var renderers = null;
  function markdownRenderers() {
    if (!renderers) {
      var loaded = new Promise(function (resolve, reject) {
        if (window.markdownit) return resolve();
        var tag = document.createElement("script");
        tag.src = new URL("assets/vendor/markdown-it.min.js", root).href;
        tag.onload = resolve;
        tag.onerror = function () { reject(new Error("assets/vendor/markdown-it.min.js")); };
        document.head.appendChild(tag);
      });
      var rules = fetch(new URL("assets/markdown.json", root).href, { credentials: "same-origin" }).then(function (answer) {
        if (!answer.ok) throw new Error("assets/markdown.json: " + answer.status);
        return answer.json();
      });
      renderers = Promise.all([rules, loaded]).then(function (both) {
        return { text: parser(both[0], both[0].rules), title: parser(both[0], both[0].title) };
      }).catch(function (error) {
        renderers = null;
        warn(error);
        return null;
      });
    }
    return renderers;
  }

  // render.py's rule `times`: a "*" between two digits (1024*14) is a multiplication, text, never emphasis.
  function times(state, silent) {
    var pos = state.pos, src = state.src;
    if (src.charAt(pos) !== "*" || pos === 0 || pos + 1 >= state.posMax) return false;
    if (!/[0-9]/.test(src.charAt(pos - 1)) || !/[0-9]/.test(src.charAt(pos + 1))) return false;
    if (!silent) state.pending += "*";
    state.pos = pos + 1;
    return true;
  }

  function parser(rules, enabled) {
    var md = window.markdownit("zero", Object.assign({}, rules.options));
    md.inline.ruler.before("emphasis", "times", times);
    md.enable(enabled);
    md.validateLink = function (url) {
      var scheme = /^\s*([A-Za-z][A-Za-z0-9+.-]*):/.exec(url);
      return scheme !== null && rules.schemes.indexOf(scheme[1].toLowerCase()) >= 0;
    };
    // render.py's _link_text: a link's text decoded, but kept as written when it would decode to a control
    // or format character or a space other than " "
    var decode = md.normalizeLinkText;
    md.normalizeLinkText = function (url) {
      var text = decode(url);
      return /[\p{C}\p{Z}]/u.test(text.replace(/ /g, "")) ? url : text;
    };
    md.linkify.set(rules.linkify);
    md.renderer.rules.link_open = function (tokens, idx, options, env, self) {
      tokens[idx].attrSet("rel", rules.rel);
      return self.renderToken(tokens, idx, options);
    };
    // an image is not of the subset: shown as the text it was written as
    md.renderer.rules.image = function (tokens, idx) {
      var token = tokens[idx];
      var title = token.attrGet("title");
      var said = "![" + token.content + "](" + (token.attrGet("src") || "") + (title ? ' "' + title + '"' : "") + ")";
      return md.utils.escapeHtml(said);
    };
    return md;
  }

  // A text's HTML as render.markdown makes it: a text of one paragraph inline, without <p>.
  function rendered(md, text) {
    var tokens = md.parse(text, {});
    if (tokens.length === 3 && tokens[0].type === "paragraph_open" && tokens[1].type === "inline" && tokens[2].type === "paragraph_close") {
      return md.renderer.render(tokens[1].children || [], md.options, {});
    }
    return md.renderer.render(tokens, md.options, {}).replace(/\n+$/, "");
  }

  // A text as pages._text writes it: a narrative's (`rich`) a block (<div>) when it renders to paragraphs
  // or a list, else inline (<span>); a title only its code spans and emphasis (never a link: it sits in one).
  function textNode(text, rich, md) {
    if (!md) return el("span", { class: "text", text: text });
    var html = rich ? rendered(md.text, text) : md.title.renderInline(text);
    var block = rich && /^<(p|ul|ol)>/.test(html);
    var node = el(block ? "div" : "span", { class: rich ? "text md" : "text" });
    node.innerHTML = html; // markdown-it's HTML: every text escaped, raw HTML off, links validated
    return node;
  }

  function cardText(texts, lang, path, record, md) {
    var shown = textIn(texts, lang);
    if (!shown.text) return null;
    var span = textNode(shown.text, path !== "title", md);
    var parts = [span];
    if (shown.lang !== lang) {
      span.setAttribute("lang", shown.lang);
      parts.push(document.createTextNode(" "), el("small", { class: "not-translated", text: WORDS[lang].not_translated }));
    } else if ((record.machine_translations || []).indexOf(path + "." + lang) >= 0) {
      var english = new URL("en/cases/" + encodeURIComponent(record.id) + "/#f-" + path.split(".")[0], root).href;
      parts.push(document.createTextNode(" "), el("small", { class: "machine-translated" }, [
        document.createTextNode(WORDS[lang].machine_translated + " · "),
        el("a", { href: english, hreflang: "en", text: WORDS[lang].read_in_english })
      ]));
    } else if (md && span.tagName === "SPAN") {
      // in the page's language, unmarked and inline: without its span, as pages._text writes it (`bare`)
      parts = Array.prototype.slice.call(span.childNodes);
    }
    var holder = document.createDocumentFragment();
    parts.forEach(function (part) { holder.appendChild(part); });
    return holder;
  }

  function sectionOf(data, lang, record, name, md) {
    var value = record[name];
    var facet = SECTION_FACETS[name];
    if (facet) {
      var names = valuesOf(record, name);
      if (!names.length) return document.createDocumentFragment(); // its heading kept, nothing under it, as on the static card
      return el("ul", { class: "terms" }, names.map(function (term) {
        var href = new URL(lang + "/" + FOLDERS[facet] + "/" + encodeURIComponent(term) + "/", root).href;
        return el("li", {}, [el("a", { href: href, text: labelOf(data, lang, facet, term) })]);
      }));
    }
    if (Array.isArray(value)) {
      var items = value.map(function (action, i) { return cardText(action && action.text, lang, name + "." + i + ".text", record, md); })
        .filter(Boolean);
      return items.length ? el("ul", { class: "actions" }, items.map(function (item) { return el("li", {}, [item]); })) : null;
    }
    return cardText(value, lang, name, record, md);
  }

  function fillCard(data, lang, item, record, md) {
    var title = item.querySelector(".title");
    var shown = cardText(record.title, lang, "title", record, md);
    if (title && shown) title.replaceChildren(shown);
    var sections = el("dl", { class: "sections" });
    WORDS[lang].sections.forEach(function (pair) {
      var html = sectionOf(data, lang, record, pair[0], md);
      if (!html) return;
      sections.appendChild(el("dt", { text: pair[1] }));
      sections.appendChild(el("dd", {}, [html]));
    });
    if (sections.childNodes.length) item.appendChild(sections);
    item.setAttribute("aria-busy", "false");
  }

  function caseItem(data, lang, item) {
    var title = textIn(item.title, lang);
    var base = lang + "/";
    var link = function (path) { return new URL(base + path, root).href; };
    var year = item.year === undefined || item.year === null ? "" : String(item.year);
    var org = labelOf(data, lang, "org", item.org || "");
    return el("li", { class: "case", id: item.id, "aria-busy": "true" }, [
      el("h2", {}, [
        el("a", { href: link("cases/" + encodeURIComponent(item.id) + "/") }, [
          el("span", { class: "case-id", text: item.id }), document.createTextNode(" "),
          el("span", { class: "title", text: title.text })
        ])
      ]),
      el("p", { class: "meta" }, [
        el("a", { class: "org", href: link("orgs/" + encodeURIComponent(item.org || "") + "/"), text: org }),
        document.createTextNode(" "),
        el("a", { class: "year", href: link("years/" + encodeURIComponent(year) + "/"), text: year })
      ])
    ]);
  }

  // Each record fetched once a page view (a card shown again, after a filter changed back, is not fetched again).
  var records = {};
  function record(id) {
    if (!records[id]) {
      records[id] = fetchJson("cases/" + encodeURIComponent(id) + ".json").catch(function (error) {
        delete records[id];
        throw error;
      });
    }
    return records[id];
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

  // A term's or an org's or a year's own page (<section id="facets" data-facet="component" data-value="nccl">):
  // its facet is ticked from the start, not written in the address; unticking it leads to the whole
  // listing, the other filters kept.
  function pageTerm(section) {
    var facet = section && section.getAttribute("data-facet");
    var value = section && section.getAttribute("data-value");
    return facet && value ? { facet: facet, value: value } : null;
  }

  function start(data) {
    var main = document.querySelector("main[data-lang]");
    var section = document.getElementById("facets");
    var list = document.querySelector("ol.cases");
    if (!main || !section || !list) return;
    var lang = WORDS[main.getAttribute("data-lang")] ? main.getAttribute("data-lang") : "en";
    var words = WORDS[lang];
    var facets = data.facets || Object.keys(words.titles);
    var term = pageTerm(section);
    var pages = document.querySelector("nav.pages");
    var kept = {
      list: list.innerHTML,
      lines: Array.prototype.map.call(document.querySelectorAll(".summing-up, .count, .range"), function (n) {
        return [n, n.textContent];
      })
    };
    var more = el("button", { type: "button", class: "cases-more", text: words.more_cases });
    more.hidden = true;
    list.parentNode.insertBefore(more, list.nextSibling);

    // The filter beyond the page's own term: what makes the listing other than the page as written.
    function beyond(filter) {
      var rest = {};
      for (var facet in filter) {
        var values = filter[facet].filter(function (v) { return !term || facet !== term.facet || v !== term.value; });
        if (values.length) rest[facet] = values;
      }
      return rest;
    }

    var filter = beyond(readFilter(facets)); // the page's own term apart: always held
    var fetching = null;
    var shown = [];
    var listed = 0;

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

    // The next SHOWN cards of the filtered cases, each filled from its record once fetched.
    function showMore() {
      var next = shown.slice(listed, listed + SHOWN);
      next.forEach(function (item) {
        var card = caseItem(data, lang, item);
        list.appendChild(card);
        Promise.all([record(item.id), markdownRenderers()]).then(function (both) {
          fillCard(data, lang, card, both[0], both[1]);
        }).catch(warn);
      });
      listed += next.length;
      more.hidden = listed >= shown.length;
      var n = shown.length;
      document.querySelectorAll(".range").forEach(function (node) {
        node.textContent = fill(words.range, { n: n, first: n ? 1 : 0, last: listed });
      });
      return next;
    }

    function render(focusId) {
      var active = Object.keys(filter).length > 0;
      var groups = el("div", { class: "facet-groups" });
      facets.forEach(function (facet) {
        var group = facetGroup(data, lang, facet, filter, term);
        if (group) groups.appendChild(group);
      });
      var clear = el("button", { type: "button", class: "facets-clear", text: words.clear_filters });
      if (!active) clear.disabled = true;
      section.replaceChildren(el("h2", { id: "facets-title", text: words.filters }), clear, groups);
      section.setAttribute("aria-labelledby", "facets-title");
      section.hidden = false;
      document.documentElement.classList.toggle("filtered", active);
      // the static pages' links are of the listing as written (the style sheet sets their display)
      if (pages) pages.style.display = active ? "none" : "";
      if (!active) {
        list.innerHTML = kept.list;
        more.hidden = true;
        kept.lines.forEach(function (pair) { pair[0].textContent = pair[1]; });
      } else {
        shown = data.cases.filter(function (item) { return matches(item, filter, null, term); });
        listed = 0;
        list.replaceChildren();
        showMore();
        var n = shown.length;
        document.querySelectorAll(".count").forEach(function (node) {
          node.textContent = fill(n === 1 ? words.count_one : words.count, { n: n });
        });
        document.querySelectorAll(".summing-up").forEach(function (node) { node.textContent = summingUp(data, lang, shown); });
      }
      if (focusId) {
        var again = document.getElementById(focusId);
        if (again) again.focus();
      }
    }

    function leave(rest) {
      // the page's own term unticked: the whole listing, under the other filters (and the search's ?q=)
      var params = new URLSearchParams(window.location.search);
      facets.forEach(function (facet) {
        params.delete(facet);
        (rest[facet] || []).forEach(function (v) { params.append(facet, v); });
      });
      var query = params.toString();
      window.location.assign(new URL(lang + "/" + (query ? "?" + query : ""), root).href);
    }

    section.addEventListener("change", function (event) {
      var box = event.target;
      if (!box || box.type !== "checkbox") return;
      if (term && box.name === term.facet && box.value === term.value) return leave(filter);
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
      withCases(function () { render(null); });
      var first = section.querySelector("input[type=checkbox]");
      if (first) first.focus();
    });
    more.addEventListener("click", function () {
      var added = showMore();
      var first = added.length ? document.getElementById(added[0].id) : null;
      if (first) {
        var link = first.querySelector("a");
        if (link) link.focus();
      }
    });
    window.addEventListener("popstate", function () {
      filter = beyond(readFilter(facets));
      if (Object.keys(filter).length || term) withCases(function () { render(null); });
      else render(null);
    });
    if (Object.keys(filter).length || term) withCases(function () { render(null); });
    else render(null);
  }

  function load() {
    var facets = Object.keys(WORDS.en.titles);
    var filtered = Object.keys(readFilter(facets)).length > 0 || pageTerm(document.getElementById("facets")) !== null;
    var first = filtered
      ? fetchJson("facets.json")
      : fetchJson("facet-counts.json").catch(function () { return fetchJson("facets.json"); });
    first.then(start).catch(warn);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", load);
  else load();
})();
