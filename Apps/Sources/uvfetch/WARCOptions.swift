import ArgumentParser
import UVFetchCore

/// `--warc FILE` and `--warc-max-size BYTES`: the archive of `uvfetch fetch` and of
/// `uvfetch worker` (each worker archives what it fetches, so a fleet's archive is the set of its
/// workers' files; a URL fetched twice, after a worker died, is in it twice).
struct WARCOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Archive every request and response in this WARC 1.1 file, as sent and received (bodies still chunked or compressed), each record gzip-compressed; exchanges without a response are left out.", valueName: "file"))
    var warc: String?

    @Option(name: .customLong("warc-max-size"), help: ArgumentHelp("With --warc, start a new file once one would pass this size (100M, 1G: K, M, G are powers of 1024); files are then numbered, FILE.warc.gz giving FILE-00000.warc.gz, FILE-00001.warc.gz, ...", valueName: "bytes"))
    var warcMaxSize: ByteSize?

    @Flag(name: .customLong("warc-append"), help: "With --warc, add to an archive that is already there (after its last whole record; with --warc-max-size, from its highest numbered file on) instead of refusing it. --resume implies it.")
    var warcAppend = false

    @Flag(name: .customLong("warc-dedup"), help: "With --warc, write a response whose payload this run already archived as a revisit record (identical-payload-digest) referring to the first, without the payload again. A worker also counts the payloads the fleet's workers archived (kept in the queue).")
    var warcDedup = false

    @Flag(name: .customLong("cdxj"), help: "With --warc, write the CDXJ index of each WARC file beside it (FILE.cdxj): a line per response and revisit record, as cdxj-indexer writes it, for pywb and other replay tools.")
    var cdxj = false

    func validate() throws {
        guard warcMaxSize == nil || warc != nil else { throw ValidationError("--warc-max-size needs --warc") }
        guard !warcAppend || warc != nil else { throw ValidationError("--warc-append needs --warc") }
        guard !warcDedup || warc != nil else { throw ValidationError("--warc-dedup needs --warc") }
        guard !cdxj || warc != nil else { throw ValidationError("--cdxj needs --warc") }
    }

    /// The writer, or nil without `--warc`; `command` and `options` become the warcinfo's
    /// description (never credentials or header values: -u and -H may carry secrets). An
    /// existing archive is appended to when `continuing` (a resumed run, a worker) or with
    /// `--warc-append`, and refused otherwise. What opening it repaired goes to standard error.
    /// - Throws: `FetchInputError` for a file that cannot be created, an archive that would be
    ///   replaced, or one that cannot be appended to; `WriteFailure` when the first record
    ///   cannot be written.
    /// `userAgent` and `robots` go into the warcinfo record as crawlers write them
    /// (`http-header-user-agent`, `robots: obey` or `ignore`), for whoever reads the archive.
    /// With `--warc-dedup`, `sharedPayloads` (a worker's fleet) counts as archived too.
    func makeWriter(command: String, options: [String], continuing: Bool, userAgent: String, robots: Bool,
                    sharedPayloads: (any PayloadIndex)? = nil) throws -> WARCWriter? {
        guard let warc else { return nil }
        var options = options
        if let warcMaxSize { options.append("--warc-max-size \(warcMaxSize.bytes)") }
        if warcDedup { options.append("--warc-dedup") }
        if cdxj { options.append("--cdxj") }
        let writer = try WARCWriter(path: warc, maximumFileSize: warcMaxSize?.bytes,
                                    info: [("description", "uvfetch \(command) " + options.joined(separator: " ")),
                                           ("http-header-user-agent", userAgent), ("robots", robots ? "obey" : "ignore")],
                                    opening: continuing || warcAppend ? .append : .new, deduplicates: warcDedup,
                                    indexes: cdxj, sharedPayloads: sharedPayloads)
        if let notice = writer.notice { LineOutput.standardError.writeWithin(seconds: 5, "uvfetch: \(notice)\n") }
        return writer
    }
}
