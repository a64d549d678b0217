// A real SMTP server for the mail tests (smtp-server), which keeps every message it accepts parsed
// by mailparser, and can be told to refuse (451, try again later) or be stopped and started again
// on the same port, as a mail server that goes away and comes back.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export class MailCatcher {
  readonly messages: ParsedMail[] = [];
  /** Connections made to it: a write that never talks to the mail server makes none. */
  connections = 0;
  /** While true, every recipient is refused with 451. */
  refusing = false;
  port = 0;
  #server: SMTPServer | undefined;

  async start(): Promise<this> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onConnect: (_session, callback) => {
        this.connections += 1;
        callback();
      },
      onRcptTo: (_address, _session, callback) => {
        if (!this.refusing) return callback();
        callback(Object.assign(new Error('Mailbox busy, try again later'), { responseCode: 451 }));
      },
      // Parsed before the server answers, so a message is here once its sender's sendMail resolves.
      onData: (stream, _session, callback) => {
        simpleParser(stream).then(
          (parsed) => {
            this.messages.push(parsed);
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.#server = server;
    return this;
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Stops listening (the port is kept for start to take again). */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The messages to this address. */
  to(address: string): ParsedMail[] {
    return this.messages.filter((m) => addresses(m).includes(address));
  }

  clear(): void {
    this.messages.length = 0;
  }
}

/** Every address a message was sent to. */
export function addresses(m: ParsedMail): string[] {
  const to = m.to === undefined ? [] : Array.isArray(m.to) ? m.to : [m.to];
  return to.flatMap((a) => a.value.map((v) => v.address ?? ''));
}
