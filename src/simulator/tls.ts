// A throw-away certificate for the HTTPS simulator: self-signed, valid one day, for 127.0.0.1, ::1
// and localhost. The same certificate is the CA a client must trust (caPem / --ca-file), so the
// client can keep full certificate verification on, never switch it off like the official SDKs.

export interface Certificate {
  key: string;
  cert: string;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * Generated asynchronously (native RSA key generation, a few hundred ms) so start-up does not
 * block.
 */
export async function makeCertificate(): Promise<Certificate> {
  // Loaded here, not at start: node-forge behind it is large, and only --https needs it.
  const { default: selfsigned } = await import('selfsigned');
  const attrs = [{ name: 'commonName', value: 'smsdrop simulator' }];
  const options = {
    keySize: 2048,
    days: 1,
    algorithm: 'sha256',
    // A little slack for a client whose clock runs slightly behind.
    notBeforeDate: new Date(Date.now() - HOUR_MS),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  };
  return new Promise((resolve, reject) => {
    selfsigned.generate(attrs, options, (err, pems) => {
      if (err) reject(err);
      else resolve({ key: pems.private, cert: pems.cert });
    });
  });
}
