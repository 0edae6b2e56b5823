/* The site's search box: Pagefind's UI over the site's own bundle (pagefind/), its input labelled, a
   Korean word's particle stripped before searching (서울은 → 서울: Pagefind matches words by prefix, and
   the index holds the stems prefix matching misses; see pipeline/site/search.py).
   The page holds only a small labelled <input type="search" id="search-start"> inside the container
   search_box_html() writes: <div id="search" data-root="../../" data-label="검색" data-ui="…/pagefind-ui.js"
   data-ui-css="…/pagefind-ui.css">. Pagefind's UI (script and stylesheet) is loaded the first time the
   reader focuses that input or types in it; the UI then takes the input's place, with what was typed
   so far as its query, the focus and the caret. */
(function () {
  "use strict";
  // The same list as PARTICLES in pipeline/site/search.py (a test keeps the two in step), longest first.
  var PARTICLES = ["으로부터", "에서부터", "이라고", "에게서", "으로서", "으로써", "까지", "부터", "에서", "에게",
    "한테", "으로", "처럼", "보다", "마다", "이나", "이다", "입니다", "은", "는", "이", "가", "을", "를", "에", "의",
    "와", "과", "도", "로", "만", "나"];
  var HANGUL = /[\uac00-\ud7a3]/;

  function stripParticles(word) {
    for (var i = 0; i < PARTICLES.length; i++) {
      var p = PARTICLES[i];
      if (word.length - p.length >= 2 && word.slice(-p.length) === p && HANGUL.test(word.charAt(word.length - p.length - 1))) {
        return word.slice(0, -p.length);
      }
    }
    return word;
  }

  function processTerm(term) {
    return term.split(/\s+/).filter(Boolean).map(stripParticles).join(" ");
  }

  function label(container) {
    var input = container.querySelector("input.pagefind-ui__search-input, input[type=text], input[type=search]");
    if (!input || input.getAttribute("data-labelled")) return input;
    input.setAttribute("data-labelled", "1");
    if (!input.id) input.id = "search-input";
    input.type = "search";
    input.setAttribute("aria-label", container.getAttribute("data-label") || "Search");
    var tag = document.createElement("label");
    tag.htmlFor = input.id;
    tag.className = "visually-hidden";
    tag.style.cssText = "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap";
    tag.textContent = container.getAttribute("data-label") || "Search";
    input.parentNode.insertBefore(tag, input);
    return input;
  }

  function handOver(container, typed, hadFocus) {
    var root = new URL(container.getAttribute("data-root") || "", document.baseURI);
    var ui = new PagefindUI({
      element: "#search",
      bundlePath: new URL("pagefind/", root).href,
      baseUrl: root.pathname,
      showImages: false,
      showSubResults: false,
      resetStyles: false,
      processTerm: processTerm,
      processResult: function (result) {
        if (result.meta) delete result.meta.stems;
        return result;
      }
    });

    function ready() {
      var input = label(container);
      if (!input) return false;
      if (typed) {
        input.value = typed;
        ui.triggerSearch(typed);
      }
      if (hadFocus) {
        input.focus();
        try { input.setSelectionRange(input.value.length, input.value.length); } catch (e) { /* not text */ }
      }
      return true;
    }

    if (!ready()) {
      var watch = new MutationObserver(function () {
        if (ready()) watch.disconnect();
      });
      watch.observe(container, { childList: true, subtree: true });
    }
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var tag = document.createElement("script");
      tag.src = src;
      tag.onload = resolve;
      tag.onerror = function () { reject(new Error("cannot load " + src)); };
      document.head.appendChild(tag);
    });
  }

  function start() {
    var container = document.getElementById("search");
    if (!container) return;
    var first = container.querySelector("#search-start");
    var loading = null;

    function wake() {
      if (loading) return;
      var css = container.getAttribute("data-ui-css");
      if (css) {
        var sheet = document.createElement("link");
        sheet.rel = "stylesheet";
        sheet.href = css;
        document.head.appendChild(sheet);
      }
      var ready = typeof PagefindUI === "undefined" ? loadScript(container.getAttribute("data-ui")) : Promise.resolve();
      loading = ready.then(function () {
        var typed = first ? first.value : "";
        var hadFocus = first ? document.activeElement === first : false;
        if (first && first.parentNode) {
          // the static box (and its label) leave: Pagefind's UI renders its own input in their place
          container.replaceChildren();
        }
        handOver(container, typed, hadFocus);
      }).catch(function (error) {
        loading = null;
        if (window.console) console.warn("search unavailable:", error);
      });
    }

    window.incidentlibSearch = { processTerm: processTerm, stripParticles: stripParticles, load: wake };
    if (!first) {
      wake();
      return;
    }
    ["focus", "keydown", "input", "pointerdown"].forEach(function (name) {
      first.addEventListener(name, wake);
    });
    if (document.activeElement === first || first.value) wake();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
