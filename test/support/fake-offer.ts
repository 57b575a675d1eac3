/**
 * A WebRTC offer written by hand, with one VP8 video track (and an Opus audio track when asked), as a browser
 * would send it to connectToGateway. Janus's VideoRoom accepts it and answers; no ICE candidate ever comes, so
 * the PeerConnection never goes up and the capture it starts waits for its media (WAITING_MEDIA) until it is
 * stopped or times out. What the gateway tests need of a capture that holds its place without a browser.
 */
export function fakeOffer(options: { audio?: boolean } = {}): { type: 'offer'; sdp: string } {
  const hex = () =>
    Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0')
      .toUpperCase();
  const fingerprint = Array.from({ length: 32 }, hex).join(':');
  const ice = ['a=ice-ufrag:bims', 'a=ice-pwd:bimsfakeofferpassword01', 'a=ice-options:trickle'];
  const security = [`a=fingerprint:sha-256 ${fingerprint}`, 'a=setup:actpass', 'a=rtcp-mux'];
  const video = [
    'm=video 9 UDP/TLS/RTP/SAVPF 96',
    'c=IN IP4 0.0.0.0',
    ...ice,
    ...security,
    'a=mid:0',
    'a=sendonly',
    'a=rtpmap:96 VP8/90000',
    'a=rtcp-fb:96 nack pli',
    'a=ssrc:1111 cname:bims-test',
    'a=msid:camera video',
  ];
  const audio = [
    'm=audio 9 UDP/TLS/RTP/SAVPF 111',
    'c=IN IP4 0.0.0.0',
    ...ice,
    ...security,
    'a=mid:1',
    'a=sendonly',
    'a=rtpmap:111 opus/48000/2',
    'a=ssrc:2222 cname:bims-test',
    'a=msid:camera audio',
  ];
  const sdp = [
    'v=0',
    `o=- ${Date.now()} 2 IN IP4 127.0.0.1`,
    's=-',
    't=0 0',
    `a=group:BUNDLE 0${options.audio ? ' 1' : ''}`,
    'a=msid-semantic: WMS camera',
    ...video,
    ...(options.audio ? audio : []),
    '',
  ].join('\r\n');
  return { type: 'offer', sdp };
}
