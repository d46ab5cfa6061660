/** Shared by the booking pages: who this browser is, and JSON calls that surface problem+json. */
export function userId() {
  let id = localStorage.getItem('booking.user_id');
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem('booking.user_id', id);
  }
  return id;
}

export async function api(method, url, body, headers = {}) {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { status: response.status, ok: response.ok, data };
}

export function money(amount) {
  return Number(amount).toFixed(2);
}

export function admissionKey(showId) {
  return `booking.admission.${showId}`;
}
