"""Host-free core. Never imports comfy, server, folder_paths, nodes or execution."""
