// Keyboard shortcuts for the review pages; everything works without this file (plain forms).
// A button with data-key="x" is pressed by the key x, unless the focus is in a text field
// (there the keys are typing; Esc leaves the field). Selects marked data-autosubmit post their form.
"use strict";
document.documentElement.classList.add("scripted");
document.addEventListener("keydown", function (event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
  var target = event.target;
  var typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement ||
               target instanceof HTMLSelectElement;
  if (typing) {
    if (event.key === "Escape") { target.blur(); }
    return;
  }
  var key = event.key.length === 1 ? event.key.toLowerCase() : "";
  if (!key) { return; }
  var buttons = document.querySelectorAll("button[data-key]");
  for (var i = 0; i < buttons.length; i++) {
    if (buttons[i].getAttribute("data-key") === key && !buttons[i].disabled) {
      event.preventDefault();
      buttons[i].click();
      return;
    }
  }
});
document.addEventListener("change", function (event) {
  var target = event.target;
  if (target instanceof HTMLSelectElement && target.hasAttribute("data-autosubmit") && target.form) {
    target.form.submit();
  }
});
