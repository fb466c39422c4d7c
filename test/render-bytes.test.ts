/**
 * v2a/node's renderBytes: encoded bytes through the whole render job (decode, Director, render,
 * format), async, with a cancel between stages.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { formatResult, isV2aError, render } from '../src/core/index.js';
import { decodeImage, renderBytes } from '../src/node/index.js';
import { scene } from './helpers/images.js';

async function png(width: number, height: number): Promise<Buffer> {
  const img = scene(width, height);
  return sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.byteLength), { raw: { width, height, channels: 4 } }).png().toBuffer();
}

describe('renderBytes', () => {
  it('gives what decodeImage, render and formatResult give, in the format asked, with the image\'s facts', async () => {
    const bytes = await png(320, 240);
    const params = { columns: 60, charset: 'blocks', color: true, format: 'ansi' } as const;
    const { result, output, image } = await renderBytes(bytes, params);
    const expected = formatResult(render(await decodeImage(bytes, { targetWidth: 60 * 4 }), params));
    assert.equal(output.body, expected.body);
    assert.equal(output.contentType, expected.contentType);
    assert.equal(result.columns, 60);
    assert.deepEqual(image, { bytes: bytes.length, format: 'png', width: 320, height: 240 });
    assert.equal(typeof (await renderBytes(bytes)).output.body, 'string', 'defaults: text');
  });

  it('an aborted signal stops it at the next stage: V2aError interrupted', async () => {
    const bytes = await png(320, 240);
    await assert.rejects(renderBytes(bytes, {}, { signal: AbortSignal.abort() }), (err) => isV2aError(err) && err.code === 'interrupted');
    const ac = new AbortController();
    const pending = renderBytes(bytes, { columns: 80 }, { signal: ac.signal });
    const why = new Error('the user closed the tab');
    ac.abort(why);
    // The caller's reason is the error's cause.
    await assert.rejects(pending, (err) => isV2aError(err) && err.code === 'interrupted' && (err as Error).cause === why);
  });

  it('refuses bad parameters, images and limits as V2aErrors naming them as the library names them', async () => {
    const bytes = await png(320, 240);
    await assert.rejects(renderBytes(bytes, { columns: 3 }), (err) => isV2aError(err) && err.code === 'invalid-parameters' && err.errors?.[0]?.parameter === 'columns');
    await assert.rejects(renderBytes(Buffer.from('not an image at all')), (err) => isV2aError(err) && err.code === 'unsupported-image');
    // Named as the option the caller set, not as the server's V2A_MAX_IMAGE_BYTES.
    await assert.rejects(renderBytes(bytes, {}, { maxBytes: 100 }), (err) => isV2aError(err) && err.code === 'image-too-large' && /maxBytes/.test(err.message) && !/V2A_/.test(err.message));
    await assert.rejects(renderBytes(bytes, {}, { maxPixels: 1000 }), (err) => isV2aError(err) && err.code === 'image-too-large' && /maxPixels/.test(err.message));
  });

  it('a png output is held to maxPixels as an input is: named as the option, the format the parameter', async () => {
    const bytes = await png(320, 240);
    // 60 x 23 cells of 8 x 16 px: 480 x 368 px, 176,640 pixels.
    const { output } = await renderBytes(bytes, { columns: 60, format: 'png' }, { maxPixels: 480 * 368 });
    assert.ok(output.body instanceof Uint8Array);
    await assert.rejects(renderBytes(bytes, { columns: 60, format: 'png' }, { maxPixels: 480 * 368 - 1 }), (err) => isV2aError(err) && err.code === 'invalid-parameters'
      && err.errors?.[0]?.parameter === 'format' && /480 x 368 px, over the limit of 176,639 pixels \(maxPixels\): ask for 59 columns or fewer/.test(err.message));
    // Text is not an image: the same grid is no more than its characters.
    assert.equal(typeof (await renderBytes(bytes, { columns: 60 }, { maxPixels: 480 * 368 - 1 })).output.body, 'string');
  });

  it('checks its own arguments: a TypeError or RangeError naming them, never internal-error', async () => {
    const bytes = await png(32, 24);
    await assert.rejects(renderBytes('photo.png' as never), TypeError);
    await assert.rejects(renderBytes(bytes, {}, { maxPixel: 5 } as never), /unknown option "maxPixel"/);
    await assert.rejects(renderBytes(bytes, {}, { maxPixels: -1 }), RangeError);
    await assert.rejects(renderBytes(bytes, {}, { timeoutSeconds: 0.5 }), /timeoutSeconds/);
    await assert.rejects(renderBytes(bytes, {}, { signal: {} as never }), /options.signal must be an AbortSignal/);
  });
});
