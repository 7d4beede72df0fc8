import Foundation

extension Certificate {
    /// File extensions `certificates(inDirectory:)` reads, compared without case.
    static let certificateFileExtensions: Set<String> = ["cer", "der", "crt", "pem"]

    /// Every certificate in the files of a directory: AFNetworking's `certificatesInBundle`,
    /// for shipping pinned certificates next to an application.
    ///
    /// Reads each `.cer`, `.der`, `.crt` and `.pem` file directly in `path` (not in
    /// subdirectories), DER or PEM; a PEM file contributes all its certificates. Files that
    /// cannot be read or hold no valid certificate are skipped, as are other extensions, so a
    /// stray file never stops the others from loading. A missing directory gives an empty set.
    public static func certificates(inDirectory path: String) -> Set<Certificate> {
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var found: Set<Certificate> = []
        for name in names {
            let file = directory.appendingPathComponent(name)
            guard certificateFileExtensions.contains(file.pathExtension.lowercased()),
                  let data = try? Data(contentsOf: file),
                  let certificates = try? certificates(fromDEROrPEM: data) else { continue }
            found.formUnion(certificates)
        }
        return found
    }
}
