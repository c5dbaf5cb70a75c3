import { describe, expect, it } from 'vitest';
import { Trigger } from './trigger.js';

describe('Trigger', () => {
  it('tells every subscriber of each fire, in subscription order, with the event', () => {
    const trigger = new Trigger<number>();
    const heard: string[] = [];
    trigger.subscribe((n) => heard.push(`a${n}`));
    trigger.subscribe((n) => heard.push(`b${n}`));
    trigger.fire(1);
    trigger.fire(2);
    expect(heard).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('does nothing without subscribers, and stops telling one that unsubscribed', () => {
    const trigger = new Trigger();
    trigger.fire();
    let heard = 0;
    const unsubscribe = trigger.subscribe(() => heard++);
    trigger.fire();
    unsubscribe();
    unsubscribe();
    trigger.fire();
    expect(heard).toBe(1);
    expect(trigger.listenerCount()).toBe(0);
  });

  it('counts one function subscribed twice as two subscriptions', () => {
    const trigger = new Trigger();
    let heard = 0;
    const listener = (): void => void heard++;
    const first = trigger.subscribe(listener);
    trigger.subscribe(listener);
    trigger.fire();
    first();
    trigger.fire();
    expect(heard).toBe(3);
  });

  it('changes only later fires when a listener subscribes or unsubscribes during one', () => {
    const trigger = new Trigger();
    const heard: string[] = [];
    const unsubscribeLater = trigger.subscribe(() => {
      heard.push('first');
      unsubscribeSecond();
      trigger.subscribe(() => heard.push('added'));
    });
    const unsubscribeSecond = trigger.subscribe(() => heard.push('second'));
    trigger.fire();
    unsubscribeLater();
    trigger.fire();
    expect(heard).toEqual(['first', 'second', 'added']);
  });

  it('still tells the others when a listener throws, then rethrows the first error', () => {
    const trigger = new Trigger();
    const heard: string[] = [];
    trigger.subscribe(() => {
      throw new TypeError('listener bug');
    });
    trigger.subscribe(() => heard.push('after'));
    expect(() => trigger.fire()).toThrow('listener bug');
    expect(heard).toEqual(['after']);
  });
});
