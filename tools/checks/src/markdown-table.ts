/**
 * A markdown table compared cell by cell: Prettier pads the cells and the separator row, so two tables are the same
 * when their trimmed cells are (an escaped `\|` stays inside its cell).
 */
export const normalizeTable = (block: string) =>
  block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) =>
      line
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/^:?-{3,}:?$/, '---'))
        .join('|'),
    )
    .join('\n');
