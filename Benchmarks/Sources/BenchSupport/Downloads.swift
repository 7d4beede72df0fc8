import Dispatch
import Foundation
import Synchronization
import UVNetworking

#if canImport(Glibc)
import Glibc
#endif

/// One large download: how long it took, what it cost the client, what arrived.
public struct DownloadResult: Sendable {
    /// Body bytes received (checked against the file's size by the caller).
    public var bytes: Int64
    /// Wall clock from the start (process start for curl, `bytes(for:)` for UVNetworking) to the
    /// last body byte, so both include their connect and handshake.
    public var seconds: Double
    /// The client's CPU time over the download.
    public var cpu: CPUTime
    /// Body chunks the client handed over (UVNetworking only): bytes / chunks is what one
    /// iteration of the consumer's loop gets.
    public var chunks: Int?
    /// The client's peak resident set during the download, in KiB (UVNetworking only).
    public var peakResidentKiB: Int?

    /// Decimal megabytes (10^6 bytes) per second.
    public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds / 1e6 : 0 }
}

/// curl downloading to /dev/null: the reference for one large body.
public enum CurlDownload {
    /// Fetches `url` once; `caFile` is trusted (`--cacert`) for https.
    public static func run(executable: String = "/usr/bin/curl", url: URL, caFile: String?) throws -> DownloadResult {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw BenchError("curl not found at \(executable) (apt-get install curl)")
        }
        var arguments = ["-s", "-S", "-o", "/dev/null", "-w", "%{http_code} %{size_download}"]
        if let caFile { arguments += ["--cacert", caFile] }
        let cpuBefore = CPUTime.ofChildren()
        let start = monotonicNanoseconds()
        let (status, output) = try runProgram(executable, arguments + [url.absoluteString], mergeStandardError: true)
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = CPUTime.ofChildren() - cpuBefore
        let fields = output.split(separator: " ")
        guard status == 0, fields.count == 2, fields[0] == "200", let bytes = Int64(fields[1]) else {
            throw BenchError("curl \(url.absoluteString) failed (status \(status)): \(output)")
        }
        return DownloadResult(bytes: bytes, seconds: seconds, cpu: cpu)
    }
}

/// UVNetworking downloading through `SessionManager.bytes(for:)`: each chunk is counted and
/// dropped, so memory stays at the stream's high-water mark however large the body is.
public enum StreamedDownload {
    /// Fetches `url` once with a new session made from `configuration` (so the connect and the
    /// handshake are part of the time, as for curl). Throws if the request fails or the status
    /// is not 200.
    public static func run(url: URL, configuration: SessionConfiguration) throws -> DownloadResult {
        let manager = SessionManager(configuration: configuration)
        defer { manager.invalidateSessionCancelingTasks(false, resetSession: false) }
        // Generous: the default 60 s would fail a slow machine's 1 GiB, and a hang still ends.
        let request = Request(url: url, timeoutInterval: 900)
        let outcome = Mutex<Result<(Int64, Int), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        resetPeakResident()
        let cpuBefore = CPUTime.ofSelf()
        let start = monotonicNanoseconds()
        Task {
            let result: Result<(Int64, Int), any Error>
            do {
                let (response, body) = try await manager.bytes(for: request)
                guard response.status.code == 200 else { throw BenchError("status \(response.status.code)") }
                var bytes: Int64 = 0
                var chunks = 0
                for try await chunk in body {
                    bytes += Int64(chunk.count)
                    chunks += 1
                }
                result = .success((bytes, chunks))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = CPUTime.ofSelf() - cpuBefore
        switch outcome.withLock({ $0 })! {
        case .success(let (bytes, chunks)):
            return DownloadResult(bytes: bytes, seconds: seconds, cpu: cpu, chunks: chunks, peakResidentKiB: peakResidentKiB())
        case .failure(let error):
            throw BenchError("UVNetworking download of \(url.absoluteString) failed: \(error)")
        }
    }

    /// Resets VmHWM (Linux: writing 5 to clear_refs), so the next read covers this download only.
    static func resetPeakResident() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// VmHWM from /proc/self/status, in KiB.
    static func peakResidentKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
