import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from '../../test/support/platform.ts';
import { packContent, unpackContent } from './content.ts';
import { createPasteRepository } from './repository.ts';
import type { NewPaste } from './tables.ts';

let t: TestApp;
before(async () => {
  t = await createTestApp({ services: ['paste'] });
});
after(async () => {
  await t.close();
});

let nextId = 9_000_000_000n;
function paste(size: number, extra: Partial<NewPaste> = {}): NewPaste {
  const id = nextId++;
  return {
    id,
    short_url: `t${id.toString(36).slice(-6)}`,
    content_type: 'text/plain',
    syntax: null,
    created_at: new Date('2026-01-05T12:00:00Z'),
    expires_at: null,
    user_id: null,
    is_private: false,
    password_hash: null,
    burn_after_read: false,
    delete_token_hash: 'f'.repeat(64),
    size,
    ...extra,
  };
}

test('one batch statement stores each text once and gives every paste its own text', async () => {
  const repository = createPasteRepository(t.adapters.database);
  // Texts of different sizes (their compressed blobs travel as one parameter, cut by offset),
  // one of them in the batch three times and one already stored by an earlier batch.
  const texts = ['alpha\n'.repeat(1000), 'b', `gamma ${'γ'.repeat(5000)}`, 'delta'];
  const contents = texts.map((text) => packContent(Buffer.from(text)));
  const earlier = paste(contents[3].size);
  await repository.insertPastes([{ paste: earlier, content: contents[3] }], new Date());
  const order = [0, 1, 0, 2, 3, 0];
  const rows = order.map((i) => ({
    paste: paste(contents[i].size, { syntax: i === 2 ? 'python' : null }),
    content: contents[i],
  }));
  await repository.insertPastes(rows, new Date());

  for (const [k, { paste: row }] of rows.entries()) {
    const found = await repository.findWithContent(row.short_url);
    assert.ok(found, row.short_url);
    assert.equal(unpackContent(found.data, found.encoding), texts[order[k]]);
    assert.equal(found.id, row.id);
    assert.equal(found.size, Buffer.byteLength(texts[order[k]]));
    assert.equal(found.syntax, order[k] === 2 ? 'python' : null);
    assert.equal(found.expires_at, null);
    assert.equal(found.created_at.toISOString(), '2026-01-05T12:00:00.000Z');
  }
  const { rows: stored } = await sql<{ hash: string; refs: bigint }>`
    select c.hash, (select count(*) from pastes p where p.content_hash = c.hash) as refs
    from paste_contents c where c.hash in (${sql.join(contents.map((c) => c.hash))})`.execute(
    t.adapters.database.db,
  );
  const refs = new Map(stored.map((row) => [row.hash, Number(row.refs)]));
  assert.equal(stored.length, 4, 'one row per text');
  assert.deepEqual(
    contents.map((c) => refs.get(c.hash)),
    [3, 1, 1, 2],
  );
});

test('a batch with a short_url that is taken fails whole (the batcher then retries its rows one by one)', async () => {
  const repository = createPasteRepository(t.adapters.database);
  const content = packContent(Buffer.from('conflict'));
  const first = paste(content.size);
  await repository.insertPastes([{ paste: first, content }], new Date());
  const clash = { ...paste(content.size), short_url: first.short_url };
  const other = paste(content.size);
  await assert.rejects(
    repository.insertPastes(
      [
        { paste: other, content },
        { paste: clash, content },
      ],
      new Date(),
    ),
    (error: { code?: string }) => error.code === '23505',
  );
  assert.equal(await repository.find(other.short_url), undefined, 'nothing of the failed batch is kept');
});
