/* The listing's filters folded on a narrow screen: <details id="filters" open> is open as written (and so
   without JavaScript); on a screen narrower than 40rem this closes it before the page is first drawn, so
   that the count line and the first cases are on the first screen. Loaded right after the details, not
   deferred: no flash of open filters. */
(function () {
  var fold = document.getElementById("filters");
  if (fold && window.matchMedia && window.matchMedia("(max-width: 40rem)").matches) fold.open = false;
})();
