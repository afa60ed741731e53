import { ChunkWriter } from './stream.js';

describe('ChunkWriter', () => {
  it('hands out full buffers whose bytes, joined, are the UTF-8 of everything written', () => {
    const out = new ChunkWriter(64);
    const texts = ['{"a":1}\n', 'Уай, ', '😀'.repeat(5), 'x'.repeat(100), '', 'end\n'];
    const chunks: Buffer[] = [];
    for (const t of texts) {
      const full = out.write(t);
      if (full) chunks.push(full);
    }
    const rest = out.take();
    if (rest) chunks.push(rest);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(texts.join(''));
    expect(chunks.length).toBeGreaterThan(1);
    // Every chunk but the last was cut before a text that might not have fitted; none is empty.
    expect(chunks.every((c) => c.length > 0)).toBe(true);
    expect(out.take()).toBeUndefined();
  });

  it('takes a text longer than its buffer whole', () => {
    const out = new ChunkWriter(8);
    expect(out.write('ab')).toBeUndefined();
    expect(out.write('é'.repeat(20))?.toString()).toBe('ab');
    expect(out.take()?.toString()).toBe('é'.repeat(20));
  });
});
