server {
    server_name example.com www.example.com;
    root @PREFIX@/html;
    index index.html index.htm;

    location / {
        try_files $uri $uri/ =404;
    }

    listen [::]:443 ssl ipv6only=on; # managed by Certbot
    listen 443 ssl; # managed by Certbot
    ssl_certificate @CERT@; # managed by Certbot
    ssl_certificate_key @KEY@; # managed by Certbot
    include letsencrypt/options-ssl-nginx.conf; # managed by Certbot
    ssl_dhparam letsencrypt/ssl-dhparams.pem; # managed by Certbot
}

server {
    if ($host = www.example.com) {
        return 301 https://$host$request_uri;
    } # managed by Certbot

    if ($host = example.com) {
        return 301 https://$host$request_uri;
    } # managed by Certbot

    listen 80;
    listen [::]:80;
    server_name example.com www.example.com;
    return 404; # managed by Certbot
}
