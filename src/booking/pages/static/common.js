/** Shared by the booking pages: who this browser is, and JSON calls that surface problem+json. */

export { api, identity } from '/static/platform/guest.js';

export function money(amount) {
  return Number(amount).toFixed(2);
}

export function admissionKey(showId) {
  return `booking.admission.${showId}`;
}

/**
 * Reads a Server-Sent Events stream with fetch, so it can carry the Authorization header, and
 * calls `onEvent(name, data)` for each event with JSON data. Resolves when the stream ends (or
 * `signal` aborts it); rejects when it cannot be opened.
 */
export async function readEvents(url, headers, signal, onEvent) {
  const response = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal });
  if (!response.ok || !response.body) throw new Error(`event stream: ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) onEvent(event, JSON.parse(data.join('\n')));
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
