// Helpers shared by the entry and exit panels.
export async function postJson(url, body, headers = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { status: response.status, ok: response.ok, data };
}

/** Shows a message in the panel's result box; kind is 'ok', 'bad' or ''. */
export function show(box, kind, title, lines = []) {
  box.hidden = false;
  box.className = `result message ${kind}`;
  box.replaceChildren();
  const heading = document.createElement('h2');
  heading.textContent = title;
  box.append(heading);
  for (const line of lines) {
    const p = document.createElement('p');
    if (Array.isArray(line)) {
      const [label, value, attribute] = line;
      p.append(`${label} `);
      const strong = document.createElement('strong');
      strong.textContent = value;
      if (attribute) strong.dataset[attribute] = '';
      p.append(strong);
    } else {
      p.textContent = line;
    }
    box.append(p);
  }
}

export function localTime(iso, timeZone) {
  return new Intl.DateTimeFormat(undefined, { timeZone, dateStyle: 'medium', timeStyle: 'short' }).format(
    new Date(iso),
  );
}

export function problemText(data) {
  if (data?.errors?.length) return data.errors.map((error) => `${error.field} ${error.message}`).join('; ');
  return data?.detail ?? data?.title ?? 'Something went wrong';
}
