// End-to-end encrypted pastes (src/paste/README.md, "Encrypted pastes"). The create form encrypts
// in this browser and posts only the envelope to the API; the paste page decrypts it here with the
// key from the link's fragment (the part after #, which browsers never send). The server never
// sees the text, the key or the password.
//
// Envelope, version 1 (src/paste/envelope.ts): [1][flags][iv: 12][salt: 16, iterations: u32 BE,
// with flag 1 only][AES-256-GCM ciphertext ‖ tag], sent as standard base64; the header bytes are
// the additional authenticated data. Flag 1: key = PBKDF2-SHA-256(fragment key ‖ password).
const VERSION = 1;
const FLAG_PASSWORD = 1;
const ITERATIONS = 600_000;
const encoder = new TextEncoder();

function toBase64(bytes) {
  let binary = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const toBase64Url = (bytes) => toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const fromBase64Url = (text) =>
  fromBase64(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));

async function aesKey(fragmentKey, password, salt, iterations) {
  if (password === undefined) {
    return crypto.subtle.importKey('raw', fragmentKey, 'AES-GCM', false, ['encrypt', 'decrypt']);
  }
  const material = new Uint8Array([...fragmentKey, ...encoder.encode(password)]);
  const base = await crypto.subtle.importKey('raw', material, 'PBKDF2', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt, iterations },
    base,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** Encrypts `text`: the base64 envelope for the server, the base64url key for the link's fragment. */
async function seal(text, password) {
  const fragmentKey = crypto.getRandomValues(new Uint8Array(32));
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const salt = password ? crypto.getRandomValues(new Uint8Array(16)) : undefined;
  const header = new Uint8Array(password ? 34 : 14);
  header.set([VERSION, password ? FLAG_PASSWORD : 0]);
  header.set(iv, 2);
  if (salt) {
    header.set(salt, 14);
    new DataView(header.buffer).setUint32(30, ITERATIONS);
  }
  const key = await aesKey(fragmentKey, password || undefined, salt, ITERATIONS);
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: header }, key, encoder.encode(text)),
  );
  const envelope = new Uint8Array(header.length + sealed.length);
  envelope.set(header);
  envelope.set(sealed, header.length);
  return { envelope: toBase64(envelope), key: toBase64Url(fragmentKey) };
}

/** The envelope's header, or an Error for one this script cannot read. */
function parseEnvelope(base64) {
  const bytes = fromBase64(base64);
  if (bytes[0] !== VERSION) throw new Error(`envelope version ${bytes[0]} is unknown`);
  const password = bytes[1] === FLAG_PASSWORD;
  const headerLength = password ? 34 : 14;
  return {
    bytes,
    password,
    header: bytes.subarray(0, headerLength),
    iv: bytes.subarray(2, 14),
    salt: password ? bytes.subarray(14, 30) : undefined,
    iterations: password ? new DataView(bytes.buffer).getUint32(30) : undefined,
    sealed: bytes.subarray(headerLength),
  };
}

async function open(envelope, fragment, password) {
  const fragmentKey = fromBase64Url(fragment);
  if (fragmentKey.length !== 32) throw new Error('the key in the link is not 32 bytes');
  const key = await aesKey(
    fragmentKey,
    envelope.password ? password : undefined,
    envelope.salt,
    envelope.iterations,
  );
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: envelope.iv, additionalData: envelope.header },
    key,
    envelope.sealed,
  );
  return new TextDecoder('utf-8', { fatal: true }).decode(plain);
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function copyButton(text) {
  const button = element('button', { type: 'button' }, 'Copy link');
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed';
    }
    setTimeout(() => {
      button.textContent = 'Copy link';
    }, 2000);
  });
  return button;
}

/** The create form: with "Encrypt" ticked, the text is encrypted here and only the envelope is posted. */
function createForm(form) {
  const option = form.querySelector('.encrypt-option');
  const box = form.querySelector('#encrypt');
  if (!option || !box) return;
  // Web Crypto exists only in secure contexts (HTTPS, localhost): without it the option stays hidden.
  if (!globalThis.crypto?.subtle) return;
  option.hidden = false;
  const section = form.closest('section') ?? form.parentElement;
  const showError = (message) => {
    let error = section.querySelector('.error');
    if (!error) {
      error = element('p', { class: 'error', role: 'alert' });
      form.before(error);
    }
    error.textContent = message;
  };
  form.addEventListener('submit', async (event) => {
    if (!box.checked) return;
    event.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    const label = button?.textContent;
    if (button) {
      button.disabled = true;
      button.textContent = 'Encrypting…';
    }
    try {
      const value = (name) => form.elements.namedItem(name);
      const password = value('password')?.value ?? '';
      const { envelope, key } = await seal(value('content').value, password);
      const body = { content: envelope, encryption: 'aes-256-gcm' };
      const expires = value('expires_in')?.value;
      if (expires) body.expires_in = Number(expires);
      if (value('burn_after_read')?.checked) body.burn_after_read = true;
      if (value('is_private')?.checked) body.is_private = true;
      const headers = { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() };
      const apiKey = value('api_key')?.value.trim();
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      const response = await fetch('/api/v1/paste', { method: 'POST', headers, body: JSON.stringify(body) });
      const answer = await response.json().catch(() => ({}));
      if (!response.ok) {
        showError(answer.detail ?? `The server answered ${response.status}`);
        return;
      }
      showCreated(section, answer, `${answer.url}#${key}`);
    } catch (error) {
      showError(`Encrypting failed: ${error.message}`);
    } finally {
      if (button?.isConnected) {
        button.disabled = false;
        button.textContent = label;
      }
    }
  });
}

function showCreated(section, created, link) {
  const heading = element('h1', { tabindex: '-1' }, 'Paste created');
  const result = element(
    'section',
    { class: 'paste-created encrypted-created' },
    heading,
    element(
      'p',
      {},
      'Its address: ',
      element('a', { class: 'paste-url', href: link }, link),
      ' ',
      copyButton(link),
    ),
    element(
      'p',
      { class: 'notice' },
      'End-to-end encrypted: the key after # is only in this link. The server never had it, so a lost link cannot be recovered.',
    ),
    element(
      'p',
      {},
      'Delete token (shown only now): ',
      element('code', { class: 'delete-token' }, created.delete_token),
    ),
    element(
      'p',
      {},
      element('a', { href: link }, 'Open the paste'),
      ' · ',
      element('a', { href: '/paste' }, 'New paste'),
    ),
  );
  section.replaceWith(result);
  heading.focus();
}

/** The paste page of an encrypted paste: decrypt with the fragment's key (and the password, if it has one). */
function viewEncrypted(view) {
  const status = view.querySelector('.encrypted-status');
  const code = view.querySelector('#paste-code');
  const block = view.querySelector('.code');
  const form = view.querySelector('.decrypt-form');
  const fail = (message) => {
    status.textContent = message;
    status.classList.add('error');
    view.dataset.state = 'failed';
  };
  const show = (text) => {
    code.textContent = text;
    block.hidden = false;
    if (form) form.hidden = true;
    status.classList.remove('error');
    status.textContent = 'Decrypted in your browser: the server has only the ciphertext.';
    view.dataset.state = 'decrypted';
  };
  if (!globalThis.crypto?.subtle) {
    fail('This browser cannot decrypt here: Web Crypto needs HTTPS.');
    return;
  }
  const fragment = location.hash.slice(1);
  if (!fragment) {
    fail('This link has no key (the part after #), so the paste cannot be decrypted. Ask for the full link.');
    return;
  }
  let envelope;
  try {
    envelope = parseEnvelope(view.dataset.envelope ?? '');
  } catch (error) {
    fail(`This paste cannot be read: ${error.message}.`);
    return;
  }
  if (!envelope.password) {
    open(envelope, fragment).then(show, () =>
      fail('The key in this link does not open this paste: the link is damaged or incomplete.'),
    );
    return;
  }
  status.textContent = 'This paste is protected by a password as well: it is part of the key.';
  view.dataset.state = 'password';
  form.hidden = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = form.querySelector('input[type="password"]');
    status.classList.remove('error');
    status.textContent = 'Decrypting…';
    try {
      show(await open(envelope, fragment, input.value));
    } catch {
      fail('Wrong password, or the link is damaged.');
      view.dataset.state = 'password';
      input.select();
    }
  });
}

const form = document.querySelector('form.paste-form');
if (form) createForm(form);
const view = document.querySelector('.paste-encrypted[data-envelope]');
if (view) viewEncrypted(view);
// The burn-after-read confirmation posts to the paste's URL: keep the key on the page it answers.
const unlock = document.querySelector('form.unlock-form');
if (unlock && location.hash)
  unlock.setAttribute('action', `${unlock.getAttribute('action')}${location.hash}`);
