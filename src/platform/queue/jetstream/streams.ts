import { type JetStreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { DeadLetter } from '../index.ts';
import { token } from './lease.ts';
import type { DeadLetterRecord } from './processor.ts';

const NANOS = 1_000_000;

export interface TopicStreamsOptions {
  namespace: string;
  dedupWindowMs: number;
  deadLetterMaxAgeMs: number;
}

/**
 * The names of a topic's streams and subjects, and the streams themselves, created on first use:
 * a work-queue stream over the topic's partitions (deduplicating by message id) and a stream of
 * its dead letters.
 */
export function topicStreams(jsm: JetStreamManager, options: TopicStreamsOptions) {
  const ns = options.namespace;
  const ensured = new Map<string, Promise<void>>();
  const names = {
    stream: (topic: string) => `${ns}_Q_${token(topic)}`.toUpperCase(),
    deadStream: (topic: string) => `${ns}_DLQ_${token(topic)}`.toUpperCase(),
    subject: (topic: string, partition: number) => `${ns}.q.${topic}.${partition}`,
    deadSubject: (topic: string) => `${ns}.dlq.${topic}`,
  };

  async function ensureStream(
    name: string,
    config: Omit<Parameters<JetStreamManager['streams']['add']>[0], 'name'>,
  ) {
    try {
      await jsm.streams.info(name);
    } catch {
      await jsm.streams.add({ ...config, name }).catch(async (error) => {
        // Another process created it in between.
        await jsm.streams.info(name).catch(() => {
          throw error;
        });
      });
    }
  }

  function create(topic: string): Promise<void> {
    return Promise.all([
      ensureStream(names.stream(topic), {
        subjects: [`${ns}.q.${topic}.*`],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window: options.dedupWindowMs * NANOS,
      }),
      ensureStream(names.deadStream(topic), {
        subjects: [names.deadSubject(topic)],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: options.deadLetterMaxAgeMs * NANOS,
      }),
    ]).then(() => {});
  }

  return {
    ...names,
    /** Resolves once the topic's streams exist; a failure is tried again by the next call. */
    ensure(topic: string): Promise<void> {
      let ready = ensured.get(topic);
      if (!ready) {
        ready = create(topic);
        ready.catch(() => ensured.delete(topic));
        ensured.set(topic, ready);
      }
      return ready;
    },
    /** The newest dead letters first, up to `limit`; a letter's id is its sequence in the stream. */
    async deadLetters<T>(topic: string, limit: number): Promise<DeadLetter<T>[]> {
      const stream = names.deadStream(topic);
      const info = await jsm.streams.info(stream);
      const letters: DeadLetter<T>[] = [];
      for (
        let seq = info.state.last_seq;
        seq >= info.state.first_seq && letters.length < limit && seq > 0;
        seq--
      ) {
        const stored = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
        if (!stored) continue;
        const dead = stored.json<DeadLetterRecord<T>>();
        letters.push({ deadLetterId: String(seq), topic, ...dead, deadAt: new Date(dead.deadAt) });
      }
      return letters;
    },
  };
}
