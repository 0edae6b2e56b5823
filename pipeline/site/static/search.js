/* The site's search box over its own static index (search/{lang}/; see pipeline/site/search.py).
   search_box_html() writes the box: <div id="search" data-root="../" data-lang="ko"> with a labelled
   <input type="search" id="search-input">; this script adds a live region (.search-status) for the count,
   an <ol class="search-results"> and the "more" button, in its words (WORDS). Nothing is fetched until the reader
   focuses the input or types in it; then the manifest (index.json), per query word the list of shards
   of its first character (heads/) and the shards it needs, and the docs/ files of the results shown (ten at a time, "more" for the next ten).
   A query: its words (letters and digits), lower case, a Korean word's particle stripped (서울에서 → 서울),
   an English word's plural s dropped; each word matches the index terms it begins; all words must match;
   ranked by summed weights (a title's words weigh more). Every URL is relative to the page.
   The query is kept in the address (?q=, beside a listing's filters), replaced as the reader types
   (history.replaceState: no history entry a keystroke), so that a search can be shared and bookmarked;
   opening an address with ?q= runs its search. */
(function () {
  "use strict";
  // The same list as PARTICLES in pipeline/site/search.py (a test keeps the two in step), longest first.
  var PARTICLES = ["으로부터", "에서부터", "이라고", "에게서", "으로서", "으로써", "까지", "부터", "에서", "에게",
    "한테", "으로", "처럼", "보다", "마다", "이나", "이다", "입니다", "은", "는", "이", "가", "을", "를", "에", "의",
    "와", "과", "도", "로", "만", "나"];
  var HANGUL = /[\uac00-\ud7a3]/;
  var WORD = /[\p{L}\p{N}]+/gu;
  var SHOWN = 10;
  // BEGIN WORDS: pipeline.site.search.search_words() (from labels.py); tests/test_site_search.py keeps it equal.
  var WORDS = {"en": {"failed": "Search is unavailable", "more": "More results", "results": "{n} results", "results_one": "{n} result"}, "ko": {"failed": "검색할 수 없습니다", "more": "검색 결과 더 보기", "results": "검색 결과 {n}건", "results_one": "검색 결과 {n}건"}};
  // END WORDS

  function stripParticles(word) {
    for (var i = 0; i < PARTICLES.length; i++) {
      var p = PARTICLES[i];
      if (word.length - p.length >= 2 && word.slice(-p.length) === p && HANGUL.test(word.charAt(word.length - p.length - 1))) {
        return word.slice(0, -p.length);
      }
    }
    return word;
  }

  function queryWords(query) {
    var words = (query.normalize("NFC").toLowerCase().match(WORD) || []).map(function (word) {
      if (HANGUL.test(word)) return stripParticles(word);
      if (/^[a-z]{4,}s$/.test(word) && !/ss$/.test(word)) return word.slice(0, -1);
      return word;
    });
    return words.filter(function (word, i) { return words.indexOf(word) === i; });
  }

  function shardKey(term) {
    var chars = Array.from(term);
    return chars.slice(0, chars[0].charCodeAt(0) > 127 ? 2 : 3).join("");
  }

  function shardName(key) {
    return Array.from(key).map(function (c) { return c.codePointAt(0).toString(16); }).join("-");
  }

  function Index(base) {
    this.base = base;
    this.files = new Map();
    this.manifest = null;
  }

  Index.prototype.get = function (path) {
    if (!this.files.has(path)) {
      var url = new URL(path, this.base).href;
      var files = this.files;
      var loading = fetch(url).then(function (response) {
        if (!response.ok) throw new Error(url + ": " + response.status);
        return response.json();
      });
      loading.catch(function () { files.delete(path); });
      this.files.set(path, loading);
    }
    return this.files.get(path);
  };

  Index.prototype.ready = function () {
    var self = this;
    if (!this.manifest) {
      this.manifest = this.get("index.json").then(function (manifest) {
        manifest.heads = new Set(Array.from(manifest.heads));
        return manifest;
      });
      this.manifest.catch(function () { self.manifest = null; });
    }
    return this.manifest;
  };

  // The shard keys a query word needs (from heads/ of its first character): its own when it is as long
  // as a key, else every key it begins.
  Index.prototype.keysFor = function (word, manifest) {
    var head = Array.from(word)[0];
    if (!manifest.heads.has(head)) return Promise.resolve([]);
    var own = shardKey(word);
    return this.get("heads/" + shardName(head) + ".json").then(function (keys) {
      return keys.filter(function (key) { return key === own || key.lastIndexOf(word, 0) === 0; });
    });
  };

  // Doc number → summed weight of the index's terms the word begins.
  function postingsOf(word, shards) {
    var found = new Map();
    shards.forEach(function (shard) {
      Object.keys(shard).forEach(function (term) {
        if (term.lastIndexOf(word, 0) !== 0) return;
        var flat = shard[term];
        var doc = 0;
        for (var i = 0; i < flat.length; i += 2) {
          doc += flat[i];
          found.set(doc, (found.get(doc) || 0) + flat[i + 1]);
        }
      });
    });
    return found;
  }

  Index.prototype.search = function (query) {
    var self = this;
    var words = queryWords(query);
    if (!words.length) return Promise.resolve({ words: words, hits: [] });
    return this.ready().then(function (manifest) {
      return Promise.all(words.map(function (word) {
        return self.keysFor(word, manifest).then(function (keys) {
          return Promise.all(keys.map(function (key) { return self.get("shards/" + shardName(key) + ".json"); }));
        }).then(function (shards) { return postingsOf(word, shards); });
      }));
    }).then(function (perWord) {
      var scores = null;
      perWord.forEach(function (found) {
        var next = new Map();
        found.forEach(function (weight, doc) {
          if (scores === null || scores.has(doc)) next.set(doc, (scores ? scores.get(doc) : 0) + weight);
        });
        scores = next;
      });
      var hits = Array.from(scores.entries()).sort(function (a, b) { return b[1] - a[1] || b[0] - a[0]; });
      return { words: words, hits: hits.map(function (hit) { return hit[0]; }) };
    });
  };

  Index.prototype.docs = function (numbers, perFile) {
    var self = this;
    return Promise.all(numbers.map(function (n) {
      return self.get("docs/" + Math.floor(n / perFile) + ".json").then(function (chunk) { return chunk[String(n)]; });
    }));
  };

  // The text with each word a query word begins marked whole (<mark>): a query word matches the terms it
  // begins, so "coredns" (its plural s dropped to "coredn") marks CoreDNS, not CoreDN. Built as nodes.
  var WORD_CHAR = /[\p{L}\p{N}]/u;
  function marked(text, words) {
    var fragment = document.createDocumentFragment();
    var lower = text.toLowerCase();
    var at = 0;
    while (at < text.length) {
      var best = -1;
      var length = 0;
      words.forEach(function (word) {
        var found = lower.indexOf(word, at);
        if (found !== -1 && (best === -1 || found < best || (found === best && word.length > length))) {
          best = found;
          length = word.length;
        }
      });
      if (best === -1) break;
      var end = best + length;
      while (end < text.length && WORD_CHAR.test(text[end])) end += 1;
      if (best > at) fragment.appendChild(document.createTextNode(text.slice(at, best)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(best, end);
      fragment.appendChild(mark);
      at = end;
    }
    if (at < text.length) fragment.appendChild(document.createTextNode(text.slice(at)));
    return fragment;
  }

  function start() {
    var box = document.getElementById("search");
    if (!box) return;
    var input = box.querySelector("#search-input");
    var rootRel = box.getAttribute("data-root") || "";
    var lang = box.getAttribute("data-lang") || "en";
    var words = WORDS[lang] || WORDS.en;
    // What the page does not write: the count's live region, the results' list, the "more" button (each
    // empty or hidden until a search, so the page does not move when they are added).
    var status = document.createElement("p");
    status.className = "search-status";
    status.setAttribute("role", "status");
    status.setAttribute("aria-live", "polite");
    var list = document.createElement("ol");
    list.className = "search-results";
    list.id = "search-results";
    list.hidden = true;
    var more = document.createElement("button");
    more.type = "button";
    more.className = "search-more";
    more.hidden = true;
    more.textContent = words.more;
    box.append(status, list, more);
    input.setAttribute("aria-controls", "search-results");
    var index = null;
    var asked = 0; // the latest query's number: an older query's answer is dropped
    var current = null;

    function say(n) {
      status.textContent = (n === 1 ? words.results_one : words.results).replace("{n}", String(n));
    }

    function wake() {
      if (!index) {
        index = new Index(new URL(rootRel + "search/" + lang + "/", document.baseURI)); // ROOT in search.py
        var style = document.createElement("style");
        style.textContent = ".search-results{margin:.5em 0;padding-left:1.5em}.search-result{margin:.4em 0}" +
          ".search-result-excerpt{margin:.1em 0 0;font-size:.9em}.search-results mark{background:#ffe58a;color:inherit}";
        document.head.appendChild(style);
      }
      return index;
    }

    function show(answer, from, number) {
      var numbers = answer.hits.slice(from, from + SHOWN);
      return index.ready().then(function (manifest) {
        return index.docs(numbers, manifest.docs_per_file);
      }).then(function (docs) {
        if (number !== asked) return;
        docs.forEach(function (doc) {
          if (!doc) return;
          var item = document.createElement("li");
          item.className = "search-result";
          var link = document.createElement("a");
          link.className = "search-result-link";
          link.setAttribute("href", rootRel + doc[0]); // relative to the page, as every link of the site
          link.appendChild(marked(doc[1], answer.words));
          var excerpt = document.createElement("p");
          excerpt.className = "search-result-excerpt";
          excerpt.appendChild(marked(doc[2], answer.words));
          item.appendChild(link);
          item.appendChild(excerpt);
          list.appendChild(item);
        });
        answer.shown = from + numbers.length;
        more.hidden = answer.shown >= answer.hits.length;
        list.hidden = answer.hits.length === 0;
        say(answer.hits.length);
      });
    }

    // The query in the address (?q=), the page's other parameters (a listing's filters) kept.
    function keep(query) {
      var params = new URLSearchParams(window.location.search);
      if (queryWords(query).length) params.set("q", query);
      else params.delete("q");
      var search = params.toString();
      if (("?" + search) === window.location.search || (!search && !window.location.search)) return;
      history.replaceState(history.state, "", window.location.pathname + (search ? "?" + search : "") + window.location.hash);
    }

    function run() {
      var query = input.value;
      var number = ++asked;
      keep(query);
      if (!queryWords(query).length) {
        current = null;
        list.replaceChildren();
        list.hidden = true;
        more.hidden = true;
        status.textContent = "";
        return;
      }
      wake().search(query).then(function (answer) {
        if (number !== asked) return;
        current = answer;
        list.replaceChildren();
        return show(answer, 0, number);
      }).catch(function (error) {
        if (number !== asked) return;
        status.textContent = words.failed;
        if (window.console) console.warn("search:", error);
      });
    }

    input.addEventListener("focus", function () { wake().ready().catch(function () { /* said on a search */ }); });
    input.addEventListener("input", run);
    input.addEventListener("search", run);
    more.addEventListener("click", function () {
      if (current) show(current, current.shown || 0, asked);
    });
    window.incidentlibSearch = { queryWords: queryWords, stripParticles: stripParticles, shardKey: shardKey };
    var given = new URLSearchParams(window.location.search).get("q");
    if (given) input.value = given;
    if (input.value) run();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
