// <notification-feed user-id="…">: a user's in-app notifications, drop-in. Set the element's
// `token` property to the user's token (`Authorization: Bearer`); `base` (attribute) is the API's
// origin when it is not this page's. The list is light DOM (the page's own styles and a11y tools
// see it), styled by notification-feed.css next to this file, loaded as a stylesheet link: no
// inline style or script, so it works under `style-src 'self'; script-src 'self'`.
//
// It loads the newest page (GET /api/users/{id}/feed), then follows the live stream
// (/feed/events) with fetch, since EventSource cannot send the Authorization header; on a break it
// reconnects with Last-Event-ID, so nothing is missed or shown twice. Each unread item has a
// "Mark read" button (keyboard: Tab to it, Enter or Space); "Mark all read" marks up to the newest
// item shown, so an item arriving meanwhile stays unread.

const STYLESHEET = new URL('./notification-feed.css', import.meta.url).href;
const PAGE_SIZE = 20;
let instances = 0;

const safeHref = (link) => {
  if (typeof link !== 'string') return null;
  if (/^\/(?![/\\])/.test(link)) return link;
  try {
    return new URL(link).protocol === 'https:' ? link : null;
  } catch {
    return null;
  }
};

function el(tag, attributes = {}, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

class NotificationFeed extends HTMLElement {
  #token = '';
  #items = []; // newest first
  #unread = 0;
  #lastEventId = '0';
  #nextCursor = null;
  #abort = null;
  #retryMs = 1000;
  #id = ++instances;

  set token(value) {
    this.#token = value ?? '';
    if (this.isConnected) this.#start();
  }
  get token() {
    return this.#token;
  }

  connectedCallback() {
    if (!document.querySelector(`link[href="${STYLESHEET}"]`)) {
      document.head.append(el('link', { rel: 'stylesheet', href: STYLESHEET }));
    }
    this.#render();
    if (this.#token) this.#start();
  }

  disconnectedCallback() {
    this.#abort?.abort();
  }

  get #base() {
    return `${this.getAttribute('base') ?? ''}/api/users/${encodeURIComponent(this.getAttribute('user-id') ?? '')}/feed`;
  }

  #headers(extra = {}) {
    return { accept: 'application/json', authorization: `Bearer ${this.#token}`, ...extra };
  }

  async #api(method, path, body) {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers: this.#headers(body ? { 'content-type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
    return response.json();
  }

  async #start() {
    this.#abort?.abort();
    this.#abort = new AbortController();
    try {
      const page = await this.#api('GET', `?limit=${PAGE_SIZE}`);
      this.#items = page.items;
      this.#unread = page.unread;
      this.#lastEventId = page.last_event_id;
      this.#nextCursor = page.next_cursor;
      this.#status('');
    } catch {
      this.#status('Notifications could not be loaded.');
    }
    this.#render();
    this.#follow(this.#abort.signal);
  }

  async #follow(signal) {
    while (!signal.aborted) {
      try {
        const response = await fetch(`${this.#base}/events`, {
          headers: { ...this.#headers({ accept: 'text/event-stream' }), 'last-event-id': this.#lastEventId },
          signal,
        });
        if (!response.ok) throw new Error(`events: ${response.status}`);
        this.#retryMs = 1000;
        this.dataset.live = 'on';
        await this.#read(response.body.getReader());
      } catch {
        // A network break or a server restart: reconnect, resuming after the last event seen.
      }
      this.dataset.live = 'off';
      if (signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, this.#retryMs));
      this.#retryMs = Math.min(this.#retryMs * 2, 30_000);
    }
  }

  async #read(reader) {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const field = (name) =>
          block
            .split('\n')
            .find((line) => line.startsWith(`${name}: `))
            ?.slice(name.length + 2);
        const event = field('event');
        const data = field('data');
        const id = field('id');
        if (event && data) this.#onEvent(event, JSON.parse(data));
        if (id) this.#lastEventId = id;
        end = buffer.indexOf('\n\n');
      }
    }
  }

  #onEvent(event, data) {
    if (event === 'item') {
      if (!this.#items.some((item) => item.id === data.id)) {
        this.#items.unshift(data);
        // Counted with the item it comes with, so list and count never disagree on screen; the
        // server's `unread` event that follows sets the exact figure.
        if (!data.read_at && !data.archived_at) this.#unread += 1;
      }
      this.#render();
      this.dispatchEvent(new CustomEvent('notification', { detail: data }));
    } else if (event === 'unread') {
      this.#unread = data.unread;
      this.#renderCount();
    } else if (event === 'state') {
      this.#apply(data);
      this.#unread = data.unread;
      this.#render();
    }
  }

  /** A mark made anywhere (this tab, another, a phone): applied to the items it names. */
  #apply({ id, up_to: upTo, mark }) {
    const at = new Date().toISOString();
    const start = upTo ? this.#items.findIndex((item) => item.id === upTo) : -1;
    const targets = id
      ? this.#items.filter((item) => item.id === id)
      : start >= 0
        ? this.#items.slice(start)
        : [];
    for (const item of targets) {
      if (mark === 'read') item.read_at ??= at;
      if (mark === 'unread') item.read_at = null;
      if (mark === 'seen' || mark === 'read') item.seen_at ??= at;
      if (mark === 'archived') item.archived_at ??= at;
      if (mark === 'unarchived') item.archived_at = null;
    }
    this.#items = this.#items.filter((item) => !item.archived_at);
  }

  async #markRead(item) {
    // Not `disabled`: a disabled button drops the keyboard focus to the page's start.
    if (item.pending) return;
    item.pending = true;
    try {
      const answer = await this.#api('PATCH', `/${item.id}`, { read: true });
      Object.assign(item, answer.item);
      this.#unread = answer.unread;
      this.#render();
    } catch {
      this.#status('Could not mark it read; try again.');
    } finally {
      item.pending = false;
    }
  }

  async #markAll() {
    const newest = this.#items[0];
    if (!newest) return;
    try {
      const answer = await this.#api('POST', '/mark', { up_to: newest.id, mark: 'read' });
      this.#apply({ up_to: newest.id, mark: 'read' });
      this.#unread = answer.unread;
      this.#render();
      this.#status('All marked read.');
    } catch {
      this.#status('Could not mark them read; try again.');
    }
  }

  async #older() {
    if (!this.#nextCursor) return;
    try {
      const page = await this.#api(
        'GET',
        `?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(this.#nextCursor)}`,
      );
      const known = new Set(this.#items.map((item) => item.id));
      this.#items.push(...page.items.filter((item) => !known.has(item.id)));
      this.#nextCursor = page.next_cursor;
      this.#render();
    } catch {
      this.#status('Older notifications could not be loaded.');
    }
  }

  #status(text) {
    const status = this.querySelector('.nf-status');
    if (status) status.textContent = text;
  }

  #renderCount() {
    const count = this.querySelector('.nf-count');
    if (count) count.textContent = this.#unread === 1 ? '1 unread' : `${this.#unread} unread`;
    const all = this.querySelector('.nf-all');
    if (all) all.disabled = this.#unread === 0;
  }

  /**
   * Rebuilds the list. Focus stays where the keyboard user is: on the same item's button after a
   * re-render (a live item, a mark from elsewhere); on the next item's when that item was just
   * marked read; else on the list itself.
   */
  #render() {
    const active = document.activeElement;
    const inList =
      active instanceof HTMLElement && active.closest('.nf-list') !== null && this.contains(active);
    const target = inList ? active.closest('li')?.dataset.id : undefined;
    if (!this.querySelector('.nf')) {
      const heading = `nf-heading-${this.#id}`;
      const section = el('section', { class: 'nf', 'aria-labelledby': heading });
      const header = el('div', { class: 'nf-header' });
      header.append(
        el('h2', { id: heading }, this.getAttribute('heading') ?? 'Notifications'),
        el('span', { class: 'nf-count', role: 'status', 'aria-live': 'polite' }),
      );
      const all = el('button', { type: 'button', class: 'nf-all' }, 'Mark all read');
      all.addEventListener('click', () => this.#markAll());
      header.append(all);
      const list = el('ul', { class: 'nf-list', 'aria-labelledby': heading, tabindex: '-1' });
      const more = el('button', { type: 'button', class: 'nf-more' }, 'Show older');
      more.addEventListener('click', () => this.#older());
      section.append(header, list, more, el('p', { class: 'nf-status', role: 'status' }));
      this.append(section);
    }
    const list = this.querySelector('.nf-list');
    list.replaceChildren(
      ...this.#items.map((item) => {
        const unread = !item.read_at;
        const li = el('li', { class: unread ? 'nf-item nf-unread' : 'nf-item', 'data-id': item.id });
        const text = el('div', { class: 'nf-text' });
        const title = el('p', { class: 'nf-title' });
        if (unread) title.append(el('span', { class: 'nf-marker' }, 'Unread: '));
        const href = safeHref(item.link);
        title.append(href ? el('a', { href }, item.title) : document.createTextNode(item.title));
        const when = new Date(item.created_at);
        text.append(
          title,
          el('p', { class: 'nf-body' }, item.body),
          el('time', { datetime: item.created_at }, when.toLocaleString()),
        );
        li.append(text);
        if (unread) {
          const button = el('button', {
            type: 'button',
            class: 'nf-read',
            'aria-label': `Mark read: ${item.title}`,
          });
          button.textContent = 'Mark read';
          button.addEventListener('click', () => this.#markRead(item));
          li.append(button);
        }
        return li;
      }),
    );
    if (this.#items.length === 0) list.append(el('li', { class: 'nf-empty' }, 'No notifications yet.'));
    this.querySelector('.nf-more').hidden = !this.#nextCursor;
    this.#renderCount();
    if (target === undefined) return;
    // The item's button, or (it was just marked read, its button gone) the next item's.
    const li = target ? list.querySelector(`[data-id="${target}"]`) : null;
    const button = li?.querySelector('button') ?? li?.nextElementSibling?.querySelector('button');
    if (button) button.focus();
    else list.focus();
  }
}

if (!customElements.get('notification-feed')) customElements.define('notification-feed', NotificationFeed);
