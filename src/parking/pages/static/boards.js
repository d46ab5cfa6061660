// Live display boards: one SSE stream sends the whole boards snapshot after every park and unpark.
// Counts are per vehicle type (what a driver has), FULL when nothing that vehicle fits is free;
// the spot types are in each board's "Spots by type".
const live = document.querySelector('[data-live]');
const updated = document.querySelector('[data-updated]');

function setCount(element, free, full = free === 0) {
  if (!element) return;
  element.querySelector('[data-free]').textContent = full ? 'FULL' : String(free);
  element.classList.toggle('full', full);
}

/** The lot's wall clock, not the viewer's: a board shows the time of the place it stands in. */
function lotClock(iso, timeZone) {
  return new Intl.DateTimeFormat('en-US', {
    timeZone,
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'short',
  }).format(new Date(iso));
}

function render(snapshot) {
  for (const board of snapshot.boards) {
    const section = document.querySelector(`[data-board="${CSS.escape(board.boardId)}"]`);
    if (!section) continue;
    for (const [type, free] of Object.entries(board.availableSpots)) {
      const element = section.querySelector(`[data-type="${type}"]`);
      setCount(element, free);
      const held = board.reservedSpots[type];
      const note = element?.querySelector('[data-type-reserved]');
      if (note) note.textContent = held ? ` · ${held} reserved` : '';
    }
    // Spots held for reservations: neither free for a walk-in nor occupied.
    const reserved = section.querySelector('[data-reserved]');
    if (reserved) {
      reserved.textContent = `${board.reserved} reserved`;
      reserved.hidden = board.reserved === 0;
    }
    const counts = Object.entries(board.vehicles);
    for (const [vehicle, count] of counts) {
      setCount(section.querySelector(`[data-vehicle="${vehicle}"]`), count.available, count.full);
    }
    const allFull = counts.length > 0 && counts.every(([, count]) => count.full);
    section.classList.toggle('all-full', allFull);
    const flag = section.querySelector('[data-board-full]');
    if (flag) flag.hidden = !allFull;
  }
  for (const [type, free] of Object.entries(snapshot.total.availableSpots)) {
    const element = document.querySelector(`[data-total="${type}"] [data-free]`);
    if (element) element.textContent = String(free);
  }
  const totalReserved = document.querySelector('[data-total-reserved]');
  if (totalReserved) {
    totalReserved.textContent = `${snapshot.total.reserved} reserved`;
    totalReserved.hidden = snapshot.total.reserved === 0;
  }
  for (const [vehicle, count] of Object.entries(snapshot.total.vehicles)) {
    setCount(document.querySelector(`[data-total-vehicle="${vehicle}"]`), count.available, count.full);
  }
  if (updated) {
    updated.dateTime = snapshot.updatedAt;
    updated.textContent = lotClock(snapshot.updatedAt, updated.dataset.timeZone);
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
