// Every page, inlined at the end of the body (exporter/render.py inline_script; the page's CSP
// allows it by its hash). Opened from disk (file://), a browser refuses the pages' module
// scripts, so they would show nothing: say what to run instead. Over http(s) it does nothing.
(function fileNotice() {
  if (location.protocol !== "file:") return;
  const script = document.currentScript;
  const root = (script && script.dataset.root) || "";
  const folder = decodeURIComponent(new URL(root || "./", location.href).pathname).replace(/\/$/, "");
  const note = document.createElement("div");
  note.className = "file-notice";
  note.setAttribute("role", "alert");
  const lead = document.createElement("strong");
  lead.textContent = "This site was opened from disk, where the browser does not run its scripts.";
  const how = document.createElement("p");
  how.append("Serve it instead, then open the address it prints: ");
  const command = document.createElement("code");
  command.textContent = "alertforge serve " + folder;
  how.append(command);
  note.append(lead, how);
  const main = document.getElementById("main") || document.body;
  main.prepend(note);
})();
