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

    func validate() throws {
        guard warcMaxSize == nil || warc != nil else { throw ValidationError("--warc-max-size needs --warc") }
    }

    /// The writer, or nil without `--warc`; `command` and `options` become the warcinfo's
    /// description (never credentials or header values: -u and -H may carry secrets).
    /// - Throws: `FetchInputError` for a file that cannot be created; `WriteFailure` when the
    ///   first record cannot be written.
    func makeWriter(command: String, options: [String]) throws -> WARCWriter? {
        guard let warc else { return nil }
        var options = options
        if let warcMaxSize { options.append("--warc-max-size \(warcMaxSize.bytes)") }
        return try WARCWriter(path: warc, maximumFileSize: warcMaxSize?.bytes,
                              info: [("description", "uvfetch \(command) " + options.joined(separator: " "))])
    }
}
