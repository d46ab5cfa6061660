// Copy buttons: [data-copy-url] copies the raw text from the server (byte-exact, unlike the page,
// whose HTML parsing turns \r\n into \n); [data-copy-target] copies an element's text;
// [data-copy-text] copies the attribute itself.
async function textFor(button) {
  if (button.dataset.copyText !== undefined) return button.dataset.copyText;
  if (button.dataset.copyUrl) {
    const response = await fetch(button.dataset.copyUrl);
    if (response.ok) return response.text();
  }
  return document.querySelector(button.dataset.copyTarget)?.textContent ?? '';
}

for (const button of document.querySelectorAll('[data-copy-url], [data-copy-target], [data-copy-text]')) {
  const label = button.textContent;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(await textFor(button));
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}

// Ctrl+Enter (⌘+Enter on a Mac) in the form sends it, as in most editors and chat boxes;
// requestSubmit runs the form's own validation first (the text is required).
for (const form of document.querySelectorAll('form.paste-form')) {
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}
