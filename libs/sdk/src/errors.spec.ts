import { describe, expect, it } from '@jest/globals';
import { GatehouseError, toApiError, unwrap } from './errors.js';

describe('toApiError', () => {
  it('keeps an error object of the APIs as it is', () => {
    const body = {
      code: 'conflict',
      message: 'duplicate code',
      details: [{ field: 'code', message: 'taken' }],
    };
    expect(toApiError(409, body)).toEqual(body);
  });

  it("fills code and message from RFC 6749's error and error_description", () => {
    expect(
      toApiError(400, { error: 'invalid_grant', error_description: 'grant request is invalid' }),
    ).toEqual({
      error: 'invalid_grant',
      error_description: 'grant request is invalid',
      code: 'invalid_grant',
      message: 'grant request is invalid',
    });
    expect(toApiError(400, { error: 'invalid_grant' })).toMatchObject({
      code: 'invalid_grant',
      message: 'invalid_grant',
    });
  });

  it("names a body that is no error object (a proxy's page) by the status's code", () => {
    expect(toApiError(502, '<html>Bad Gateway</html>')).toEqual({
      code: 'internal_error',
      message: '<html>Bad Gateway</html>',
    });
    expect(toApiError(503, undefined, 'Service Unavailable')).toEqual({
      code: 'service_unavailable',
      message: 'Service Unavailable',
    });
    expect(toApiError(418, {})).toEqual({ code: 'invalid_request', message: 'HTTP 418' });
  });
});

describe('unwrap', () => {
  it('answers the data of a 2xx and throws a GatehouseError otherwise', () => {
    expect(unwrap({ data: { id: 1 }, response: new Response(null, { status: 200 }) })).toEqual({ id: 1 });
    expect(unwrap({ response: new Response(null, { status: 204 }) })).toBeUndefined();
    const response = new Response(null, { status: 404, statusText: 'Not Found' });
    let thrown: unknown;
    try {
      unwrap({ error: { code: 'not_found', message: 'no such client' }, response });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GatehouseError);
    expect(thrown).toMatchObject({
      status: 404,
      code: 'not_found',
      message: '404 not_found: no such client',
      response,
    });
  });
});
