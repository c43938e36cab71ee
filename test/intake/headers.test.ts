// Header mapping: every alias (English and Chinese), loose spelling, value numbering, refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FileRefusedError, mapHeader } from '../../src/intake/index.js';

function refusal(header: string[]): FileRefusedError {
  try {
    mapHeader(header);
  } catch (err) {
    assert.ok(err instanceof FileRefusedError, `expected FileRefusedError, got ${String(err)}`);
    return err;
  }
  assert.fail(`header ${JSON.stringify(header)} was accepted`);
}

describe('mapHeader: the phone column', () => {
  const aliases = [
    'phone',
    'mobile',
    'to',
    'number',
    'tel',
    '手机',
    '手机号',
    '手机号码',
    '电话',
    '号码',
  ];
  for (const alias of aliases) {
    it(`finds "${alias}"`, () => {
      assert.equal(mapHeader(['name', alias, 'data1']).phone, 1);
    });
  }
  for (const spelling of [
    'PHONE',
    ' Phone ',
    'Mo_bile',
    'MO-BILE',
    'mo bile',
    '手机 号',
    '\u3000手机号码\u3000',
    'T_e-L',
  ]) {
    it(`ignores case, spaces, _ and - in ${JSON.stringify(spelling)}`, () => {
      assert.equal(mapHeader([spelling]).phone, 0);
    });
  }
  it('refuses a header without a phone column, naming the accepted names', () => {
    const err = refusal(['name', 'data1']);
    assert.match(err.message, /no phone column/);
    assert.match(err.message, /手机号/);
    assert.equal(err.line, 1);
  });
  it('says so when the first row looks like data', () => {
    assert.match(refusal(['13800138000', 'hello']).message, /looks like data/);
  });
  it('says so when the header is one cell separated by semicolons or tabs', () => {
    assert.match(
      refusal(['手机号;模板ID;参数1']).message,
      /separated by semicolons: save the file as CSV with commas/,
    );
    assert.match(refusal(['phone\ttemplate']).message, /separated by tabs/);
    assert.doesNotMatch(refusal(['name', 'a;b']).message, /separated by/);
  });
  it('refuses two phone columns, naming both', () => {
    const err = refusal(['手机号', 'Mobile', 'data1']);
    assert.match(err.message, /two phone columns/);
    assert.match(err.message, /"手机号" and "Mobile"/);
  });
});

describe('mapHeader: template and app columns', () => {
  for (const alias of [
    'templateId',
    'template',
    'Template_ID',
    'template-id',
    '模板',
    '模板ID',
    '模板id',
    '模板编号',
  ]) {
    it(`finds template column "${alias}"`, () => {
      assert.equal(mapHeader(['phone', alias]).templateId, 1);
    });
  }
  for (const alias of ['appId', 'app', 'APP_ID', 'App Id', '应用ID', '应用id']) {
    it(`finds app column "${alias}"`, () => {
      assert.equal(mapHeader(['phone', alias]).appId, 1);
    });
  }
  it('leaves templateId and appId unset when absent', () => {
    const map = mapHeader(['phone']);
    assert.equal(map.templateId, undefined);
    assert.equal(map.appId, undefined);
  });
  it('refuses two template columns and two app columns', () => {
    assert.match(refusal(['phone', 'template', '模板ID']).message, /two template columns/);
    assert.match(refusal(['phone', 'appId', 'app']).message, /two app columns/);
  });
});

describe('mapHeader: template values', () => {
  for (const family of ['data', 'var', 'param', '参数', '变量', 'DATA_', 'Param ']) {
    it(`numbers "${family}1..3" in order whatever the column order`, () => {
      const map = mapHeader([`${family}3`, 'phone', `${family}1`, `${family}2`]);
      assert.deepEqual(map.datas, [2, 3, 0]);
    });
  }
  it('treats mixed families as one numbering', () => {
    assert.deepEqual(mapHeader(['phone', 'var2', 'data1']).datas, [2, 1]);
  });
  it('has no values when there are no value columns', () => {
    assert.deepEqual(mapHeader(['phone']).datas, []);
  });
  it('refuses a gap in the numbering, saying which value is missing', () => {
    const err = refusal(['phone', 'data1', 'data3']);
    assert.match(err.message, /without gaps/);
    assert.match(err.message, /value 2 is missing/);
  });
  it('refuses numbering that does not start at 1', () => {
    assert.match(refusal(['phone', 'data2']).message, /value 1 is missing/);
    assert.match(refusal(['phone', 'data0', 'data1']).message, /numbered from 1/);
  });
  it('refuses two columns with the same number', () => {
    assert.match(refusal(['phone', 'data1', 'var1']).message, /two columns for template value 1/);
  });
});

describe('mapHeader: other columns', () => {
  it('keeps the header as written and every other column as an extra', () => {
    const header = [' 备注 ', '手机号', 'name', '参数1', 'data'];
    const map = mapHeader(header);
    assert.deepEqual(map.header, header);
    assert.deepEqual(map.extras, [0, 2, 4]);
    assert.deepEqual(map.datas, [3]);
  });
});
