// Live display boards: one SSE stream sends the whole boards snapshot after every park and unpark.
const live = document.querySelector('[data-live]');
const updated = document.querySelector('[data-updated]');

function setCount(element, free) {
  if (!element) return;
  element.querySelector('[data-free]').textContent = free === 0 ? 'FULL' : String(free);
  element.classList.toggle('full', free === 0);
}

function render(snapshot) {
  for (const board of snapshot.boards) {
    const section = document.querySelector(`[data-board="${CSS.escape(board.boardId)}"]`);
    if (!section) continue;
    for (const [type, free] of Object.entries(board.availableSpots)) {
      setCount(section.querySelector(`[data-type="${type}"]`), free);
    }
  }
  for (const [type, free] of Object.entries(snapshot.total.availableSpots)) {
    const element = document.querySelector(`[data-total="${type}"] [data-free]`);
    if (element) element.textContent = String(free);
  }
  if (updated) {
    updated.dateTime = snapshot.updatedAt;
    updated.textContent = new Date(snapshot.updatedAt).toLocaleTimeString();
  }
  document.body.dataset.boardsVersion = String(Number(document.body.dataset.boardsVersion ?? 0) + 1);
}

const source = new EventSource('/api/v1/parking/boards/stream');
source.addEventListener('open', () => {
  live.textContent = 'live';
  live.classList.add('on');
});
source.addEventListener('error', () => {
  live.textContent = 'reconnecting…';
  live.classList.remove('on');
});
source.addEventListener('boards', (event) => render(JSON.parse(event.data)));
