// One key takes or dismisses a focused suggestion on the draft page: t takes, d dismisses. The buttons
// beside it do the same (this only presses them); nothing happens while typing in a field.
document.addEventListener("keydown", function (event) {
  var item = document.activeElement;
  if (!item || !item.matches || !item.matches(".suggestions li[tabindex]")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  var button = null;
  if (event.key === "t") button = item.querySelector('button[form="take-suggestion"]');
  if (event.key === "d") button = item.querySelector('button[form="dismiss-suggestion"]');
  if (button) { event.preventDefault(); button.click(); }
});
