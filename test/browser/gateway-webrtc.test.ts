import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { Browser } from 'playwright-core';
import { adminAuth, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { serveOnLoopback } from '../support/serve.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';
import { setUpMediaNet, type MediaNet } from '../support/media-net.js';

/**
 * A real WebRTC call through our gateway operations: Chromium's fake camera and microphone, a peer connection
 * negotiated only through /user/gateway/... (never with Janus directly), Janus's echo test sending the media
 * back. The page comes from a test-only app on another port; our API lets it in through BIMS_CORS_ORIGINS.
 *
 * The media stays on a host-local link (test/support/media-net.ts): a veth pair with Janus gathering only on
 * its host end and Chromium alone in a network namespace at the other end, so the one path ICE can find is that
 * link. Loopback itself is out of reach because Janus never gathers on an IFF_LOOPBACK interface. The page and
 * our API listen on the link's host address, the only one the namespaced browser can reach. Without root the
 * test runs over the host's own addresses instead and says so.
 */
let net: MediaNet;
let sidecar: TestSidecar;
let booted: Awaited<ReturnType<typeof bootForTest>>;
let api: Awaited<ReturnType<typeof serveOnLoopback>>;
let page: Awaited<ReturnType<typeof serveOnLoopback>>;
let browser: Browser;

const pageApp = new Hono().get('/', (c) =>
  c.html('<!doctype html><html><head><title>gateway test</title></head><body>gateway test</body></html>'),
);

beforeAll(async () => {
  net = await setUpMediaNet();
  console.info(`[gateway-webrtc] media path: ${net.describe}`);
  const isolated = net.mode === 'isolated' ? net : null;
  sidecar = await startTestSidecar(isolated ? { BIMS_JANUS_ICE_ENFORCE_LIST: isolated.hostIf } : {});
  const listenOn = isolated?.hostAddr ?? '127.0.0.1';
  page = await serveOnLoopback(pageApp.fetch, listenOn);
  booted = await bootForTest('pglite', { ...sidecar.env, BIMS_CORS_ORIGINS: page.url });
  api = await serveOnLoopback(booted.app.fetch, listenOn);
  const media = ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'];
  browser = isolated
    ? // getUserMedia needs a secure context; http://127.0.0.1 is one, the link's address is not unless told so.
      await launchChromium([...media, `--unsafely-treat-insecure-origin-as-secure=${page.url}`], {
        netns: isolated.netns,
      })
    : await launchChromium(media);
});
afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await page?.stop();
  await booted?.close();
  await sidecar?.stop();
  // After the browser: its namespace is only released once no process is left in it.
  await net?.down();
});

async function admin(path: string, init: RequestInit = {}) {
  const res = await fetch(`${api.url}${path}`, {
    ...init,
    headers: { authorization: adminAuth, 'content-type': 'application/json', ...init.headers },
  });
  return { status: res.status, json: await res.json() };
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('WebRTC through the gateway operations', () => {
  it('negotiates, trickles, reaches webrtcup, receives the echoed media, and stops', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(page.url);

    // In the page: media, offer, connect -> answer, then trickle one candidate, the rest as a list, then completed.
    const ids = await tab.evaluate(
      async ({ apiUrl, authorization }) => {
        const call = async (path: string, body?: unknown) => {
          const res = await fetch(`${apiUrl}${path}`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const json = await res.json();
          if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
          return json;
        };
        const w = window as unknown as Record<string, unknown>;
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        const pc = new RTCPeerConnection({ iceServers: [] });
        w.pc = pc;
        const candidates: RTCIceCandidateInit[] = [];
        const gathered = new Promise<void>((resolve) => {
          pc.onicecandidate = (event) => (event.candidate ? candidates.push(event.candidate.toJSON()) : resolve());
        });
        for (const track of stream.getTracks()) pc.addTrack(track, stream);

        const attached = await call('/user/gateway/create-and-attach');
        const sessionId: number = attached.session_id;
        const handleId: number = attached.data.id;
        const offer = await pc.createOffer();
        await pc.setLocalDescription(offer);
        const connected = await call('/user/gateway/connect', {
          sessionId,
          handleId,
          jsep: { type: offer.type, sdp: offer.sdp },
          params: { kind: 'FV', purpose: 'CHECK' },
        });
        if (connected.jsep?.type !== 'answer') throw new Error(`no JSEP answer: ${JSON.stringify(connected)}`);
        await pc.setRemoteDescription(connected.jsep);

        await gathered;
        if (candidates.length === 0) throw new Error('the browser gathered no ICE candidates');
        const [first, ...rest] = candidates;
        await call('/user/gateway/trickle', { sessionId, handleId, candidate: first });
        if (rest.length) await call('/user/gateway/trickle', { sessionId, handleId, candidates: rest });
        await call('/user/gateway/trickle', { sessionId, handleId, completed: true });
        return { sessionId, handleId, plugin: connected.plugindata, candidates: candidates.length };
      },
      { apiUrl: api.url, authorization: adminAuth },
    );
    expect(ids.plugin).toMatchObject({ plugin: 'janus.plugin.echotest', data: { echotest: 'event', result: 'ok' } });
    const { sessionId, handleId } = ids;

    // Janus reports the PeerConnection up: our service saw the webrtcup event, the Admin API shows the handle ready.
    const session = await until('webrtcup', async () => {
      const { json } = await admin(`/admin/gateway/session?sessionId=${sessionId}&handleId=${handleId}`);
      return json.events?.some((e: { janus: string }) => e.janus === 'webrtcup') ? json : null;
    });
    expect(session.liveHandles).toEqual([handleId]);
    expect(session.info.flags).toMatchObject({ ready: true, negotiated: true });

    // The echo comes back: the browser decodes frames and receives audio from Janus.
    const stats = await until('echoed media', async () => {
      const inbound = await tab.evaluate(async () => {
        const pc = (window as unknown as { pc: RTCPeerConnection }).pc;
        const out: Record<string, { bytesReceived: number; framesDecoded?: number }> = {};
        (await pc.getStats()).forEach((r) => {
          if (r.type === 'inbound-rtp')
            out[r.kind] = { bytesReceived: r.bytesReceived, framesDecoded: r.framesDecoded };
        });
        return out;
      });
      return (inbound.video?.framesDecoded ?? 0) > 5 && (inbound.audio?.bytesReceived ?? 0) > 0 ? inbound : null;
    });
    expect(stats.video!.bytesReceived).toBeGreaterThan(0);
    expect(await tab.evaluate(() => (window as unknown as { pc: RTCPeerConnection }).pc.connectionState)).toBe(
      'connected',
    );

    // Which path ICE chose: the transport's selected pair and every pair whose checks succeeded.
    const path = await tab.evaluate(async () => {
      const report = await (window as unknown as { pc: RTCPeerConnection }).pc.getStats();
      const byId = new Map<string, Record<string, unknown>>();
      report.forEach((r) => byId.set(r.id, r));
      const address = (id: unknown) => byId.get(id as string)?.address as string | undefined;
      const pairOf = (p: Record<string, unknown>) => ({
        local: address(p.localCandidateId),
        remote: address(p.remoteCandidateId),
      });
      const transport = [...byId.values()].find((r) => r.type === 'transport' && r.selectedCandidatePairId);
      const selected = transport ? byId.get(transport.selectedCandidatePairId as string) : undefined;
      return {
        selected: selected ? { ...pairOf(selected), state: selected.state } : null,
        succeeded: [...byId.values()].filter((r) => r.type === 'candidate-pair' && r.state === 'succeeded').map(pairOf),
      };
    });
    expect(path.selected).toMatchObject({ state: 'succeeded' });
    expect(path.succeeded).toContainEqual({ local: path.selected!.local, remote: path.selected!.remote });
    if (net.mode === 'isolated') {
      // Browser at the namespace end, Janus at the host end: the veth link, and nothing else, carried the call.
      expect(path.selected).toMatchObject({ local: net.peerAddr, remote: net.hostAddr });
      for (const pair of path.succeeded) expect(pair).toEqual({ local: net.peerAddr, remote: net.hostAddr });
    } else {
      // Fallback: both ends are this host's own addresses, which the kernel delivers without leaving the host.
      expect(net.hostAddrs).toContain(path.selected!.local);
      expect(net.hostAddrs).toContain(path.selected!.remote);
    }

    // Stop through the operation: hangup, detach, destroy; the session is gone from the gateway.
    const stopped = await admin('/user/gateway/stop', {
      method: 'POST',
      body: JSON.stringify({ sessionId, handleId }),
    });
    expect(stopped.status).toBe(200);
    const { json: listed } = await admin('/admin/gateway/list-sessions');
    expect(listed.sessions).not.toContain(sessionId);
    expect(errors).toEqual([]);
    await tab.close();
  });
});
