// The door scanner: reads a ticket's QR code (camera or photo, decoded by jsQR) or a typed code and
// admits it with POST /api/v1/tickets/check-in (the page session's cookie is the door staff's
// credential; the token travels in the body, out of URL logs). Without a network a scan is kept in
// localStorage and sent when the browser is back online; its result then shows in the list.
const QUEUE_KEY = 'door.queue';
const SETTINGS_KEY = 'door.settings';
// A code still in front of the camera is read many times a second: one check per code per pause.
const SAME_CODE_PAUSE_MS = 3000;

const $ = (id) => document.getElementById(id);
const showInput = $('show-id');
const doorInput = $('door-name');
const result = $('result');
const net = $('net');

const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}');
if (!showInput.value && saved.show_id) showInput.value = saved.show_id;
if (!doorInput.value && saved.door) doorInput.value = saved.door;
for (const input of [showInput, doorInput]) {
  input.addEventListener('change', () =>
    localStorage.setItem(
      SETTINGS_KEY,
      JSON.stringify({ show_id: showInput.value.trim(), door: doorInput.value.trim() }),
    ),
  );
}

const readQueue = () => JSON.parse(localStorage.getItem(QUEUE_KEY) ?? '[]');
const writeQueue = (queue) => {
  localStorage.setItem(QUEUE_KEY, JSON.stringify(queue));
  renderQueue();
};

/** The last 4 characters of a token: enough to tell scans apart on screen, never the credential. */
const tail = (token) => `…${token.slice(-4)}`;
const time = (iso) =>
  new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function renderQueue() {
  const queue = readQueue();
  $('queued-count').textContent = String(queue.length);
  $('queue').replaceChildren(
    ...queue.map((scan) => {
      const item = document.createElement('li');
      item.dataset.queued = '';
      item.textContent = `${tail(scan.token)} scanned ${time(scan.scanned_at)} at ${scan.door}`;
      return item;
    }),
  );
}

/** What a check-in answer means for the person at the door, as a heading and lines. */
function describe(status, data) {
  if (status === 200) {
    return {
      kind: 'admitted',
      title: 'Admit',
      lines: [`Seats ${data.seats.join(', ')}`, `Booked by ${data.holder}`, `${data.movie_title}`],
    };
  }
  const lines = [data.detail ?? data.title ?? `Error ${status}`];
  if (data.code === 'already_checked_in') {
    return {
      kind: 'refused',
      title: 'Already admitted',
      lines: [`At ${data.door}, ${time(data.checked_in_at)}`, `Seats ${data.seats.join(', ')}`],
    };
  }
  const titles = {
    wrong_show: 'Wrong show',
    show_ended: 'Show has ended',
    ticket_cancelled: 'Cancelled ticket',
    ticket_not_valid: 'Not a valid ticket',
    booking_not_found: 'Unknown ticket',
    unauthorized: 'Sign in again',
    forbidden: 'Not allowed to admit',
  };
  return { kind: 'refused', title: titles[data.code] ?? 'Not admitted', lines };
}

function showResult({ kind, title, lines }) {
  result.hidden = false;
  result.className = `scan-result ${kind}`;
  result.dataset.kind = kind;
  const heading = document.createElement('h2');
  heading.textContent = title;
  result.replaceChildren(
    heading,
    ...lines.map((line) => {
      const p = document.createElement('p');
      p.textContent = line;
      return p;
    }),
  );
}

function remember(scan, outcome, synced) {
  const item = document.createElement('li');
  item.dataset.kind = outcome.kind;
  if (synced) item.dataset.synced = '';
  item.textContent = `${outcome.title}: ${tail(scan.token)} ${time(scan.scanned_at)}${synced ? ' (sent after reconnecting)' : ''} — ${outcome.lines[0]}`;
  const history = $('history');
  history.prepend(item);
  while (history.children.length > 20) history.lastElementChild.remove();
}

/** Sends one scan; undefined when the network failed (the scan should wait). */
async function send(scan) {
  let response;
  try {
    response = await fetch('/api/v1/tickets/check-in', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: scan.token, show_id: scan.show_id, door: scan.door }),
    });
  } catch {
    return undefined;
  }
  const data = await response.json().catch(() => ({}));
  return describe(response.status, data);
}

async function scan(token) {
  const show_id = showInput.value.trim().toLowerCase();
  const door = doorInput.value.trim();
  if (!$('door-settings').reportValidity()) return;
  const entry = { token, show_id, door, scanned_at: new Date().toISOString() };
  const outcome = navigator.onLine ? await send(entry) : undefined;
  if (!outcome) {
    writeQueue([...readQueue(), entry]);
    showResult({
      kind: 'queued',
      title: 'Saved, no network',
      lines: ['It is checked as soon as the network is back.'],
    });
    updateNet();
    return;
  }
  showResult(outcome);
  remember(entry, outcome, false);
}

let syncing = false;
/** Sends the waiting scans in the order they were made; stops at the first network failure. */
async function sync() {
  if (syncing || !navigator.onLine) return;
  syncing = true;
  try {
    for (let queue = readQueue(); queue.length > 0; queue = readQueue()) {
      const [first] = queue;
      const outcome = await send(first);
      if (!outcome) break;
      writeQueue(
        readQueue().filter((entry) => entry.scanned_at !== first.scanned_at || entry.token !== first.token),
      );
      remember(first, outcome, true);
    }
  } finally {
    syncing = false;
    updateNet();
  }
}

function updateNet() {
  const waiting = readQueue().length;
  net.textContent = navigator.onLine
    ? waiting
      ? `Online, sending ${waiting} saved scan${waiting === 1 ? '' : 's'}`
      : 'Online'
    : `Offline${waiting ? `, ${waiting} scan${waiting === 1 ? '' : 's'} saved` : ''}`;
  net.dataset.online = String(navigator.onLine);
}

window.addEventListener('online', () => {
  updateNet();
  sync();
});
window.addEventListener('offline', updateNet);
// A lost answer (online but unreachable) leaves scans waiting: try again now and then.
setInterval(() => {
  if (readQueue().length) sync();
}, 5000);

$('manual').addEventListener('submit', (event) => {
  event.preventDefault();
  const token = $('token').value.trim();
  if (!token) return;
  $('token').value = '';
  scan(token);
});

/** The QR code's text in an image (a video frame, a photo), or undefined. */
function decode(source, width, height) {
  const canvas = document.createElement('canvas');
  // A phone photo is large: jsQR needs no more than ~1000 px to find a ticket's code.
  const scale = Math.min(1, 1000 / Math.max(width, height));
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  const context = canvas.getContext('2d', { willReadFrequently: true });
  context.drawImage(source, 0, 0, canvas.width, canvas.height);
  const image = context.getImageData(0, 0, canvas.width, canvas.height);
  return globalThis.jsQR(image.data, image.width, image.height)?.data || undefined;
}

let lastCode = '';
let lastAt = 0;
function found(code) {
  const now = Date.now();
  if (code === lastCode && now - lastAt < SAME_CODE_PAUSE_MS) return;
  lastCode = code;
  lastAt = now;
  scan(code);
}

$('photo').addEventListener('change', async () => {
  const file = $('photo').files?.[0];
  $('photo').value = '';
  if (!file) return;
  const bitmap = await createImageBitmap(file);
  const code = decode(bitmap, bitmap.width, bitmap.height);
  if (code) found(code);
  else
    showResult({
      kind: 'refused',
      title: 'No code found',
      lines: ['Hold the code flat and fill the frame, or type it.'],
    });
});

let stream;
$('camera').addEventListener('click', async () => {
  const video = $('video');
  if (stream) {
    for (const track of stream.getTracks()) track.stop();
    stream = undefined;
    video.hidden = true;
    $('camera').textContent = 'Scan with the camera';
    return;
  }
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      video: { facingMode: 'environment' },
      audio: false,
    });
  } catch {
    showResult({
      kind: 'refused',
      title: 'No camera',
      lines: ['Allow the camera, scan a photo or type the code.'],
    });
    return;
  }
  video.srcObject = stream;
  video.hidden = false;
  await video.play();
  $('camera').textContent = 'Stop the camera';
  const tick = () => {
    if (!stream) return;
    if (video.readyState >= 2) {
      const code = decode(video, video.videoWidth, video.videoHeight);
      if (code) found(code);
    }
    // A few frames a second read a code as fast as staff can aim, and spare a phone's battery.
    setTimeout(() => requestAnimationFrame(tick), 200);
  };
  tick();
});

renderQueue();
updateNet();
sync();
