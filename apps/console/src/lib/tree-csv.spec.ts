import { csvRecordCount, exportFileName, idleProgress, percent, uploadProgress } from './tree-csv';

describe('CSV import progress', () => {
  it('goes from uploading to processing when every byte is sent, never backwards', () => {
    let p = uploadProgress(idleProgress, 0, 1000);
    expect(p).toEqual({ phase: 'uploading', sent: 0, total: 1000 });
    p = uploadProgress(p, 500, 1000);
    expect(percent(p)).toBe(47);
    p = uploadProgress(p, 400, 1000); // a late, smaller report
    expect(p.sent).toBe(500);
    p = uploadProgress(p, 1000, 1000);
    expect(p.phase).toBe('processing');
    expect(percent(p)).toBe(95);
    expect(percent({ ...p, phase: 'done' })).toBe(100);
    expect(percent(idleProgress)).toBe(0);
  });

  it('keeps the known total when a report has none', () => {
    const p = uploadProgress({ phase: 'uploading', sent: 0, total: 800 }, 200, 0);
    expect(p).toEqual({ phase: 'uploading', sent: 200, total: 800 });
  });

  it('counts the records of a file, header excluded, quoted line breaks once', () => {
    expect(csvRecordCount('code,parent_code,name\n')).toBe(0);
    expect(csvRecordCount('code,parent_code,name\nA,,Assets\nA1,A,Cash\n')).toBe(2);
    expect(csvRecordCount('\uFEFFcode,parent_code,name\r\nA,,"Two\r\nlines"\r\nB,,x')).toBe(2);
    expect(csvRecordCount('code,parent_code,name\n\nA,,x\n\n')).toBe(1);
    expect(csvRecordCount('')).toBe(0);
  });

  it('names the download after the tree and the version, without path characters', () => {
    expect(exportFileName('coa', 'v1')).toBe('coa-v1.csv');
    expect(exportFileName('a:b', 'v*2')).toBe('a_b-v_2.csv');
  });
});
