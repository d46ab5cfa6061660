/** Shared by the booking pages: who this browser is, and JSON calls that surface problem+json. */

/**
 * This browser's guest identity: a user id and the token proving it (`POST /api/v1/guests`),
 * kept in localStorage. The token is what lets "My bookings" read this user's history.
 */
export async function identity() {
  let user = localStorage.getItem('booking.user_id');
  let token = localStorage.getItem('booking.user_token');
  if (!user || !token) {
    const { ok, data } = await api('POST', '/api/v1/guests');
    if (!ok) throw new Error(data.detail ?? 'Could not start a guest session');
    user = data.user_id;
    token = data.token;
    localStorage.setItem('booking.user_id', user);
    localStorage.setItem('booking.user_token', token);
  }
  return { user, token };
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
