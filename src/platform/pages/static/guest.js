/**
 * This browser's guest identity, shared by every page that acts as a user (seat booking, parking
 * reservations, the in-app feed): a user id and the token proving it (`POST /api/v1/guests`),
 * kept in localStorage and sent as `Authorization: Bearer`. The keys keep the booking pages' names,
 * so browsers that got their guest there stay the same user everywhere.
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

/** A JSON call: the status, whether it succeeded, and the body (problem+json on errors, `{}` if none). */
export async function api(method, url, body, headers = {}) {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { status: response.status, ok: response.ok, data };
}
