/** Autocomplete on the title box: suggestions as you type (typo-tolerant), arrows + Enter to pick. */
const input = document.getElementById('q');
const list = document.getElementById('suggestions');
let timer;
let active = -1;
let items = [];
let controller;

function render() {
  list.replaceChildren(
    ...items.map((item, index) => {
      const li = document.createElement('li');
      li.role = 'option';
      li.id = `suggestion-${index}`;
      li.className = index === active ? 'active' : '';
      const link = document.createElement('a');
      link.href = `/movies/${item.movie_id}`;
      link.textContent = item.title;
      const year = document.createElement('span');
      year.className = 'muted';
      year.textContent = ` ${item.release_date.slice(0, 4)}`;
      link.append(year);
      li.append(link);
      return li;
    }),
  );
  list.hidden = items.length === 0;
  input.setAttribute('aria-expanded', String(items.length > 0));
  if (active >= 0) input.setAttribute('aria-activedescendant', `suggestion-${active}`);
  else input.removeAttribute('aria-activedescendant');
}

async function suggest() {
  const q = input.value.trim();
  if (q.length < 2) {
    items = [];
    return render();
  }
  controller?.abort();
  controller = new AbortController();
  try {
    const response = await fetch(`/api/v1/movies/suggest?q=${encodeURIComponent(q)}&limit=8`, {
      signal: controller.signal,
    });
    if (!response.ok) return;
    items = (await response.json()).suggestions;
    active = -1;
    render();
  } catch {
    // aborted by the next keystroke
  }
}

input.addEventListener('input', () => {
  clearTimeout(timer);
  timer = setTimeout(suggest, 150);
});
input.addEventListener('keydown', (event) => {
  if (list.hidden) return;
  if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
    event.preventDefault();
    const step = event.key === 'ArrowDown' ? 1 : -1;
    active = (active + step + items.length) % items.length;
    render();
  } else if (event.key === 'Enter' && active >= 0) {
    event.preventDefault();
    location.href = `/movies/${items[active].movie_id}`;
  } else if (event.key === 'Escape') {
    items = [];
    render();
  }
});
input.addEventListener('blur', () =>
  setTimeout(() => {
    items = [];
    render();
  }, 200),
);
