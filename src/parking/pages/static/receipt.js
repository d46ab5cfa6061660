// The receipt page: a print button (inline handlers are not allowed by the page's security policy).
document.querySelector('[data-print]')?.addEventListener('click', () => window.print());
