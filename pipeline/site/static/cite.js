// The citation's retrieval date is the reader's: the page is written with the day the case last
// changed (so an unchanged page stays the same file); this puts today's date in its place.
(function () {
  "use strict";
  var today = new Date().toISOString().slice(0, 10);
  document.querySelectorAll("[data-retrieved]").forEach(function (element) {
    var written = element.getAttribute("data-retrieved");
    if (written && element.textContent.indexOf(written) >= 0) {
      element.textContent = element.textContent.split(written).join(today);
    }
  });
})();
