/* The site's search box: Pagefind's UI over the site's own bundle (pagefind/), its input labelled, a
   Korean word's particle stripped before searching (서울은 → 서울: Pagefind matches words by prefix, and
   the index holds the stems prefix matching misses; see pipeline/site/search.py).
   The container is written by search_box_html(): <div id="search" data-root="../../" data-label="검색">. */
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
    if (!input || input.id) return !!input;
    input.id = "search-input";
    input.setAttribute("aria-label", container.getAttribute("data-label") || "Search");
    var tag = document.createElement("label");
    tag.htmlFor = input.id;
    tag.className = "visually-hidden";
    tag.style.cssText = "position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap";
    tag.textContent = container.getAttribute("data-label") || "Search";
    input.parentNode.insertBefore(tag, input);
    return true;
  }

  function start() {
    var container = document.getElementById("search");
    if (!container || typeof PagefindUI === "undefined") return;
    var root = new URL(container.getAttribute("data-root") || "", document.baseURI);
    new PagefindUI({
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
    if (!label(container)) {
      var watch = new MutationObserver(function () {
        if (label(container)) watch.disconnect();
      });
      watch.observe(container, { childList: true, subtree: true });
    }
    window.incidentlibSearch = { processTerm: processTerm, stripParticles: stripParticles };
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
