// Swagger UI's page with what it lacks: a way back to the app, a main landmark, and a name for the
// server picker. Swagger UI renders after load, into #swagger-ui; our bar sits outside it.
const header = document.createElement('header');
header.className = 'app-bar';
const back = document.createElement('a');
back.href = '/';
back.className = 'app-back';
back.textContent = '← Back to Four Services';
header.append(back);
document.body.prepend(header);
const ui = document.getElementById('swagger-ui');
if (ui) {
  const main = document.createElement('main');
  ui.replaceWith(main);
  main.append(ui);
  // Swagger UI renders (and re-renders) its server <select> without a label, and its code boxes
  // (the curl line, answers) scroll without being reachable by the keyboard.
  new MutationObserver(() => {
    const servers = ui.querySelector('select#servers:not([aria-label])');
    if (servers) servers.setAttribute('aria-label', 'Server');
    for (const box of ui.querySelectorAll('pre.microlight:not([tabindex]), .curl:not([tabindex])')) {
      box.setAttribute('tabindex', '0');
    }
  }).observe(ui, { childList: true, subtree: true });
}
