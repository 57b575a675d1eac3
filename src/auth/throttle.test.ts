import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './throttle.js';

describe('LoginThrottle', () => {
  it('locks a key after five failures, for longer each time, and a success clears it', () => {
    let now = 0;
    const throttle = new LoginThrottle(() => now);
    for (let i = 0; i < 4; i++) throttle.fail(['user:a']);
    expect(() => throttle.check(['user:a'])).not.toThrow();
    throttle.fail(['user:a']);
    expect(() => throttle.check(['user:a'])).toThrow(/Too many failed logins/);
    now += 1_001;
    expect(() => throttle.check(['user:a'])).not.toThrow();
    throttle.fail(['user:a']);
    now += 1_001;
    expect(() => throttle.check(['user:a'])).toThrow();
    now += 1_000;
    throttle.succeed(['user:a']);
    expect(() => throttle.check(['user:a'])).not.toThrow();
    expect(() => throttle.check(['user:b'])).not.toThrow();
  });
});
