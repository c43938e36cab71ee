// Answer bodies in the provider's two formats. Business errors travel as HTTP 200 with a
// statusCode, as the real service does; the message text is informative only (clients must not
// parse it), but it follows the provider's 【账号】/【短信】 prefixes so logs look familiar.

export type WireFormat = 'json' | 'xml';

const STATUS_MESSAGES: Record<string, string> = {
  '111101': '【账号】请求地址Authorization为空',
  '111102': '【账号】请求地址Authorization解码失败',
  '111103': '【账号】请求地址Authorization格式错误',
  '111104': '【账号】请求地址Authorization中账户ID为空',
  '111105': '【账号】请求地址Authorization中时间戳为空',
  '111106': '【账号】时间戳过期',
  '111107': '【账号】请求地址Authorization中的账户ID与URL中的不一致',
  '111108': '【账号】请求地址SigParameter为空',
  '111109': '【账号】请求地址SigParameter校验失败',
  '111113': '【账号】请求地址时间戳格式错误',
  '111114': '【账号】并发请求过多',
  '111115': '【账号】请求IP不在白名单内',
  '111116': '【账号】调用过于频繁',
  '111212': '【应用】应用未上线',
  '111226': '【应用】应用已删除或禁用',
  '111141': '【账号】主账户不存在',
  '111181': '【应用】应用不存在',
  '112306': '【短信】接收短信的号码为空',
  '112311': '【短信】模板不存在',
  '112609': '【短信】不支持分块传输',
  '112610': '【短信】Accept错误',
  '112611': '【短信】Content-Type错误',
  '112612': '【短信】Content-Length错误',
  '160000': '【短信】系统错误',
  '160030': '【短信】请求包体为空',
  '160031': '【短信】参数解析失败',
  '160034': '【短信】号码黑名单',
  '160042': '【短信】号码格式有误',
  '160045': '【短信】重复号码',
  '160048': '【短信】号码超过上限',
  '160052': '【短信】模板变量格式有误',
  '160054': '【短信】请求重复',
  '160055': '【短信】请求ID超长',
  '160059': '【短信】国际短信不能群发',
  '160070': '【短信】自定义模板不支持国际号码',
  '160071': '【短信】营销短信不在允许发送的时间段',
};

function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

const XML_PROLOG = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';

export interface Reply {
  contentType: string;
  body: string;
}

const CONTENT_TYPES: Record<WireFormat, string> = {
  json: 'application/json;charset=utf-8',
  xml: 'application/xml;charset=utf-8',
};

export function contentTypeOf(format: WireFormat): string {
  return CONTENT_TYPES[format];
}

/** A failed request: statusCode plus statusMsg. */
export function errorReply(statusCode: string, format: WireFormat): Reply {
  const statusMsg = STATUS_MESSAGES[statusCode] ?? '【短信】请求失败';
  const body =
    format === 'json'
      ? JSON.stringify({ statusCode, statusMsg })
      : `${XML_PROLOG}<Response><statusCode>${escapeXml(statusCode)}</statusCode><statusMsg>${escapeXml(statusMsg)}</statusMsg></Response>`;
  return { contentType: contentTypeOf(format), body };
}

/**
 * An accepted request. The JSON member is `templateSMS` (lowercase t), the XML element
 * `TemplateSMS`.
 */
export function successReply(
  smsMessageSid: string,
  dateCreated: string,
  format: WireFormat,
): Reply {
  // The JSON is what JSON.stringify would write for these values (hex and digits need no
  // escaping), without the object.
  const body =
    format === 'json'
      ? `{"statusCode":"000000","templateSMS":{"smsMessageSid":"${smsMessageSid}","dateCreated":"${dateCreated}"}}`
      : `${XML_PROLOG}<Response><statusCode>000000</statusCode><TemplateSMS><smsMessageSid>${smsMessageSid}</smsMessageSid><dateCreated>${dateCreated}</dateCreated></TemplateSMS></Response>`;
  return { contentType: contentTypeOf(format), body };
}
