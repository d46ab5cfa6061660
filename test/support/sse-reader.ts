/** Test helper: reads Server-Sent Events from a fetch response as `{event, data}` objects. */
export function sseEvents(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  async function next(): Promise<{ event: string; data: unknown; id?: string }> {
    while (true) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n').filter((line) => !line.startsWith(':'));
        if (lines.length === 0) continue;
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
        const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
        const id = lines.find((line) => line.startsWith('id: '))?.slice(4);
        return { event, data: data === undefined ? undefined : JSON.parse(data), id };
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended');
      buffer += decoder.decode(value);
    }
  }
  return {
    next,
    /** The next event of a name (others are skipped) that passes the check, within timeoutMs. */
    async until<T>(event: string, check: (data: T) => boolean = () => true, timeoutMs = 10_000): Promise<T> {
      const deadline = AbortSignal.timeout(timeoutMs);
      while (true) {
        const next$ = next();
        const timeout = new Promise<never>((_, reject) =>
          deadline.addEventListener(
            'abort',
            () => reject(new Error(`no "${event}" event within ${timeoutMs} ms`)),
            { once: true },
          ),
        );
        const got = await Promise.race([next$, timeout]);
        if (got.event === event && check(got.data as T)) return got.data as T;
      }
    },
    cancel: () => reader.cancel(),
  };
}
