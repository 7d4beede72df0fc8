/// MIME types for common file extensions, for file parts whose type the caller did not give.
/// Linux has no UTType, so this small table stands in for AFNetworking's
/// UTTypeCopyPreferredTagWithClass lookup.
enum MIMETypes {
    /// AFNetworking's fallback for an unknown extension.
    static let fallback = "application/octet-stream"

    /// The type for `pathExtension` (case-insensitive, without the dot), or the fallback.
    static func forPathExtension(_ pathExtension: String) -> String {
        table[pathExtension.lowercased()] ?? fallback
    }

    private static let table: [String: String] = [
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain",
        "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "md": "text/markdown", "js": "text/javascript", "mjs": "text/javascript", "ics": "text/calendar",
        // Structured data and documents
        "json": "application/json", "xml": "application/xml", "pdf": "application/pdf",
        "rtf": "application/rtf", "wasm": "application/wasm", "yaml": "application/yaml", "yml": "application/yaml",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        // Archives
        "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "7z": "application/x-7z-compressed", "bz2": "application/x-bzip2",
        // Images
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "svg": "image/svg+xml", "bmp": "image/bmp", "ico": "image/vnd.microsoft.icon",
        "tif": "image/tiff", "tiff": "image/tiff", "heic": "image/heic", "avif": "image/avif",
        // Audio and video
        "mp3": "audio/mpeg", "wav": "audio/wav", "m4a": "audio/mp4", "aac": "audio/aac",
        "ogg": "audio/ogg", "flac": "audio/flac",
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "avi": "video/x-msvideo", "mpeg": "video/mpeg",
    ]
}
